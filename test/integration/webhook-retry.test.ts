import test from 'ava';
import { ManualClock, ManualTimers } from '../helpers/manual-time.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { inbound, setWebhook, startReceiver, waitForOutbox } from '../helpers/receiver.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a 500 is retried with the same webhook-id, then delivered', async (t) => {
  const receiver = await startReceiver();
  receiver.script(500);
  const d = await startTestDaemon({ config: { webhooks: { allowPrivateTargets: true, retryDelaysMs: [50, 50] } } });
  try {
    const inst = await d.connectedSandbox();
    await setWebhook(d, inst, receiver.url);
    await inbound(d, inst, '+15551234567', 'retry me');
    const [first, second] = await receiver.waitForCount(2);
    t.is(first!.headers['webhook-id'], second!.headers['webhook-id']);
    t.is(first!.body, second!.body);
    const [record] = await waitForOutbox(d.dataDir, inst.id, (r) => r[0]?.status === 'delivered');
    t.is<string | undefined, string | undefined>(record!.id, first!.headers['webhook-id']);
    t.is(record!.attempts, 2);
    t.is(record!.lastStatus, 200);
    t.is(record!.lastError, null);
    t.truthy(record!.deliveredAt);
    await sleep(150);
    t.is(receiver.requests.length, 2, 'no attempt after the acknowledgement');
  } finally {
    await d.close();
    await receiver.close();
  }
});

test('retries follow webhooks.retryDelaysMs on an injected clock, then the delivery is marked failed', async (t) => {
  const T0 = Date.UTC(2026, 0, 1);
  const clock = new ManualClock(T0);
  const timers = new ManualTimers(clock);
  const receiver = await startReceiver({ reply: { status: 500, body: 'database is down' } });
  const d = await startTestDaemon({
    clock,
    timers, webhooks: { random: () => 0.5 },
    config: { webhooks: { allowPrivateTargets: true, retryDelaysMs: [5_000, 300_000, 1_800_000] } },
  });
  try {
    const inst = await d.connectedSandbox();
    await setWebhook(d, inst, receiver.url);
    await inbound(d, inst, '+15551234567', 'never acknowledged');
    const attempted = (n: number) => waitForOutbox(d.dataDir, inst.id, (r) => r[0]?.attempts === n);

    let [r] = await attempted(1);
    t.is(r!.status, 'pending');
    t.is(r!.lastStatus, 500);
    t.is(r!.lastError, 'HTTP 500: database is down');
    t.is(r!.nextAttemptAt, new Date(T0 + 5_000).toISOString());

    timers.advance(4_999);
    await sleep(150);
    t.is(receiver.requests.length, 1, 'not retried before its time');
    timers.advance(1);
    [r] = await attempted(2);
    t.is(r!.nextAttemptAt, new Date(T0 + 5_000 + 300_000).toISOString());

    timers.advance(299_000);
    await sleep(100);
    t.is(receiver.requests.length, 2);
    timers.advance(1_000);
    [r] = await attempted(3);
    t.is(r!.nextAttemptAt, new Date(T0 + 305_000 + 1_800_000).toISOString());

    timers.advance(1_800_000);
    [r] = await waitForOutbox(d.dataDir, inst.id, (x) => x[0]?.status === 'failed');
    t.is(r!.attempts, 4, 'one attempt plus one per configured delay');
    t.is(r!.nextAttemptAt, null);
    t.truthy(r!.finishedAt);

    // Every attempt carried the same id and its own timestamp (seconds of the injected clock).
    const ids = new Set(receiver.requests.map((q) => q.headers['webhook-id']));
    t.is(ids.size, 1);
    t.deepEqual(
      receiver.requests.map((q) => Number(q.headers['webhook-timestamp'])),
      [T0, T0 + 5_000, T0 + 305_000, T0 + 2_105_000].map((ms) => Math.floor(ms / 1000)),
    );
    timers.advance(100_000_000);
    await sleep(100);
    t.is(receiver.requests.length, 4, 'nothing after the last attempt');
  } finally {
    await d.close();
    await receiver.close();
  }
});

test('a receiver that never answers times out and is retried', async (t) => {
  const clock = new ManualClock();
  const timers = new ManualTimers(clock);
  const receiver = await startReceiver({ reply: 'hang' });
  const d = await startTestDaemon({
    clock,
    timers, webhooks: { random: () => 0.5 },
    config: { webhooks: { allowPrivateTargets: true, timeoutMs: 200, retryDelaysMs: [5_000] } },
  });
  try {
    const inst = await d.connectedSandbox();
    await setWebhook(d, inst, receiver.url);
    await inbound(d, inst, '+15551234567', 'anyone there?');
    const [r] = await waitForOutbox(d.dataDir, inst.id, (x) => x[0]?.attempts === 1);
    t.is(r!.status, 'pending');
    t.is(r!.lastStatus, null);
    t.regex(r!.lastError ?? '', /timeout: no answer within 200 ms/);

    receiver.setDefault(204);
    timers.advance(5_000);
    const [done] = await waitForOutbox(d.dataDir, inst.id, (x) => x[0]?.status === 'delivered');
    t.is(done!.attempts, 2);
    t.is(receiver.requests.length, 2);
    t.is(receiver.requests[0]!.headers['webhook-id'], receiver.requests[1]!.headers['webhook-id']);
  } finally {
    await d.close();
    await receiver.close();
  }
});

test('a redirect is a failed attempt and is not followed', async (t) => {
  const elsewhere = await startReceiver();
  const receiver = await startReceiver({ reply: { status: 302, headers: { location: elsewhere.url } } });
  const d = await startTestDaemon({ config: { webhooks: { allowPrivateTargets: true, retryDelaysMs: [] } } });
  try {
    const inst = await d.connectedSandbox();
    await setWebhook(d, inst, receiver.url);
    await inbound(d, inst, '+15551234567', 'follow me');
    const [r] = await waitForOutbox(d.dataDir, inst.id, (x) => x[0]?.status === 'failed');
    t.is(r!.lastStatus, 302);
    t.is(r!.lastError, 'HTTP 302: redirects are not followed');
    t.is(receiver.requests.length, 1);
    t.is(elsewhere.requests.length, 0);
  } finally {
    await d.close();
    await receiver.close();
    await elsewhere.close();
  }
});

test('a large error body is cut to a short lastError', async (t) => {
  const receiver = await startReceiver({ reply: { status: 503, body: 'x'.repeat(2_000_000) } });
  const d = await startTestDaemon({ config: { webhooks: { allowPrivateTargets: true, retryDelaysMs: [] } } });
  try {
    const inst = await d.connectedSandbox();
    await setWebhook(d, inst, receiver.url);
    await inbound(d, inst, '+15551234567', 'big answer');
    const [r] = await waitForOutbox(d.dataDir, inst.id, (x) => x[0]?.status === 'failed');
    t.is(r!.lastStatus, 503);
    t.true((r!.lastError ?? '').startsWith('HTTP 503: xxx'));
    t.true((r!.lastError ?? '').length < 300);
  } finally {
    await d.close();
    await receiver.close();
  }
});
