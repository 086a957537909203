import test from 'ava';
import { ManualClock, ManualTimers } from '../helpers/manual-time.js';
import { startTestDaemon, waitFor } from '../helpers/daemon.js';
import { inbound, setWebhook, startReceiver, waitForOutbox } from '../helpers/receiver.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a message being retried holds back later messages of its chat, not other chats', async (t) => {
  const clock = new ManualClock();
  const timers = new ManualTimers(clock);
  const receiver = await startReceiver();
  let failedFirst = false;
  receiver.setDefault((req) => {
    if (req.json.data.text === 'A1' && !failedFirst) {
      failedFirst = true;
      return 500;
    }
    return 200;
  });
  const d = await startTestDaemon({
    clock,
    timers, webhooks: { random: () => 0.5 },
    config: { webhooks: { allowPrivateTargets: true, retryDelaysMs: [5_000] } },
  });
  try {
    const inst = await d.connectedSandbox();
    await setWebhook(d, inst, receiver.url);
    await inbound(d, inst, '+15550000001', 'A1');
    await inbound(d, inst, '+15550000001', 'A2');
    await inbound(d, inst, '+15550000001', 'A3');
    await inbound(d, inst, '+15550000002', 'B1');

    await waitForOutbox(d.dataDir, inst.id, (r) => r.find((x) => x.event.type === 'message.received' && x.event.data.text === 'B1')?.status === 'delivered');
    await sleep(150);
    const texts = () => receiver.requests.map((r) => String(r.json.data.text));
    t.deepEqual(texts().filter((x) => x.startsWith('A')), ['A1'], 'A2 and A3 wait for A1');
    t.true(texts().includes('B1'), 'another chat is not held back');

    timers.advance(5_000);
    await waitFor(() => receiver.requests.length >= 5, 5000, 'all deliveries');
    t.deepEqual(texts().filter((x) => x.startsWith('A')), ['A1', 'A1', 'A2', 'A3']);
    const records = await waitForOutbox(d.dataDir, inst.id, (r) => r.every((x) => x.status === 'delivered'));
    t.is(records.length, 4);
  } finally {
    await d.close();
    await receiver.close();
  }
});

test('message.status events keep their chat\'s order and wait only behind their own chat', async (t) => {
  // Contract part 2: message.status "in order per chat". A status of chat A being retried holds
  // back A's later statuses (never sent out of order), not chat B's.
  const clock = new ManualClock();
  const timers = new ManualTimers(clock);
  const receiver = await startReceiver();
  let failedFirst = false;
  receiver.setDefault((req) => {
    if (req.json.type === 'message.status' && String(req.json.data.chatId).startsWith('15550000001') && req.json.data.status === 'delivered' && !failedFirst) {
      failedFirst = true;
      return 500;
    }
    return 200;
  });
  const d = await startTestDaemon({ clock, timers, webhooks: { random: () => 0.5 }, config: { webhooks: { allowPrivateTargets: true, retryDelaysMs: [5_000] } } });
  try {
    // Sends need credits (a sandbox gets no trial premium).
    const inst = await d.connectedSandbox({ credits: 10 });
    await setWebhook(d, inst, receiver.url, { events: ['message.status'] });
    const send = async (phone: string) => (await d.request('POST', `/api/${inst.id}/send`, { key: inst.key, json: { phone, message: 'x' } })).body.messageId as string;
    const a = await send('+15550000001');
    const b = await send('+15550000002');
    for (const [id, status] of [[a, 'delivered'], [a, 'read'], [b, 'delivered'], [b, 'read']] as const) {
      t.is((await d.request('POST', `/api/${inst.id}/sandbox/receipt`, { key: inst.key, json: { messageId: id, status } })).status, 200);
    }
    const seen = (id: string) => receiver.requests.filter((r) => r.json.data.messageId === id).map((r) => String(r.json.data.status));
    await waitFor(() => seen(b).includes('read'), 5000, "chat B's statuses");
    await sleep(150);
    t.deepEqual(seen(b), ['sent', 'delivered', 'read'], 'chat B is not held back');
    t.deepEqual(seen(a), ['sent', 'delivered'], "A's read waits behind A's delivered being retried");
    timers.advance(5_000);
    await waitFor(() => seen(a).includes('read'), 5000, "chat A's read");
    t.deepEqual(seen(a), ['sent', 'delivered', 'delivered', 'read']);
  } finally {
    await d.close();
    await receiver.close();
  }
});

test('the oldest delivery of a chat failing for good lets the next one go', async (t) => {
  const receiver = await startReceiver();
  receiver.setDefault((req) => (req.json.data.text === 'first' ? 500 : 200));
  const d = await startTestDaemon({ config: { webhooks: { allowPrivateTargets: true, retryDelaysMs: [30] } } });
  try {
    const inst = await d.connectedSandbox();
    await setWebhook(d, inst, receiver.url);
    await inbound(d, inst, '+15550000001', 'first');
    await inbound(d, inst, '+15550000001', 'second');
    const records = await waitForOutbox(d.dataDir, inst.id, (r) => r.length === 2 && r.every((x) => x.status !== 'pending'));
    t.deepEqual(records.map((r) => r.status), ['failed', 'delivered']);
    t.deepEqual(receiver.requests.map((r) => r.json.data.text), ['first', 'first', 'second']);
  } finally {
    await d.close();
    await receiver.close();
  }
});

test('deliveries run at most webhooks.concurrency at once', async (t) => {
  const receiver = await startReceiver({ reply: 'hang' });
  const d = await startTestDaemon({
    webhooks: { stopGraceMs: 10 },
    // Attempts hang until they time out (1.5 s): long enough that a loaded machine still sees only two in flight.
    config: { webhooks: { allowPrivateTargets: true, concurrency: 2, timeoutMs: 1_500, retryDelaysMs: [60_000] } },
  });
  try {
    const inst = await d.connectedSandbox();
    await setWebhook(d, inst, receiver.url);
    for (let i = 1; i <= 5; i++) await inbound(d, inst, `+1555000000${i}`, `chat ${i}`);
    await receiver.waitForCount(2);
    await sleep(150);
    t.is(receiver.requests.length, 2, 'the other three wait for a slot');
    // Timed-out attempts free their slots for the rest.
    await receiver.waitForCount(5);
    t.is(receiver.maxConcurrent, 2);
  } finally {
    await d.close();
    await receiver.close();
  }
});
