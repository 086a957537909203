import test from 'ava';
import { startTestDaemon } from '../helpers/daemon.js';
import { inbound, setWebhook, startReceiver, waitForOutbox } from '../helpers/receiver.js';

test('past maxPendingPerInstance the oldest pending deliveries are marked failed', async (t) => {
  const receiver = await startReceiver({ reply: 500 });
  const d = await startTestDaemon({
    config: { webhooks: { allowPrivateTargets: true, maxPendingPerInstance: 3, retryDelaysMs: [600_000] } },
  });
  try {
    const inst = await d.connectedSandbox();
    await setWebhook(d, inst, receiver.url);
    for (let i = 1; i <= 5; i++) {
      await inbound(d, inst, `+1555000000${i}`, `m${i}`);
      // Let its first attempt finish so it is not in flight when the bound is enforced.
      await waitForOutbox(d.dataDir, inst.id, (r) => r.length === i && r.every((x) => x.attempts >= 1 || x.status === 'failed'));
    }
    const records = await waitForOutbox(d.dataDir, inst.id, (r) => r.filter((x) => x.status === 'failed').length === 2);
    const text = (x: (typeof records)[number]) => (x.event.type === 'message.received' ? x.event.data.text : '');
    t.deepEqual(records.filter((x) => x.status === 'failed').map(text), ['m1', 'm2']);
    t.deepEqual(records.filter((x) => x.status === 'pending').map(text), ['m3', 'm4', 'm5']);
    for (const r of records.filter((x) => x.status === 'failed')) t.regex(r.lastError ?? '', /more than 3 deliveries pending.*webhooks\.maxPendingPerInstance/);
    t.is(d.webhooks.pendingCount(), 3);
  } finally {
    await d.close();
    await receiver.close();
  }
});

test('finished deliveries past historyPerInstance are removed in a batch, oldest first', async (t) => {
  const receiver = await startReceiver();
  const d = await startTestDaemon({ config: { webhooks: { allowPrivateTargets: true, historyPerInstance: 2 } } });
  try {
    const inst = await d.connectedSandbox();
    await setWebhook(d, inst, receiver.url);
    // Pruning waits until the history is 10 % (at least 10) over the limit, then cuts it back.
    for (let i = 1; i <= 12; i++) {
      await inbound(d, inst, '+15550000001', `h${i}`);
      await receiver.waitForCount(i);
    }
    await waitForOutbox(d.dataDir, inst.id, (r) => r.length === 12 && r.every((x) => x.status === 'delivered'));
    await inbound(d, inst, '+15550000001', 'h13');
    await receiver.waitForCount(13);
    const records = await waitForOutbox(d.dataDir, inst.id, (r) => r.length === 2 && r.every((x) => x.status === 'delivered'));
    t.deepEqual(records.map((x) => (x.event.type === 'message.received' ? x.event.data.text : '')), ['h12', 'h13']);
    t.is(d.webhooks.pendingCount(), 0);
  } finally {
    await d.close();
    await receiver.close();
  }
});
