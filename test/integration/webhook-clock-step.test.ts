/**
 * Guards issue 21 item 10 (and the clock part of item 14): retries wait on a monotonic clock. A
 * retry due in 1 s is made 1 s later although the wall clock stepped back an hour meanwhile (before:
 * nothing was attempted until the wall clock caught up); and a stored nextAttemptAt that lies in the
 * future of a restarted daemon's clock (written while the clock was ahead) is not waited for
 * longer than the longest retry delay.
 */
import test from 'ava';
import type { Clock } from '../../src/domain/clock.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { inbound, setWebhook, startReceiver, waitForOutbox } from '../helpers/receiver.js';

/** The system clock with its wall time moved by `offset` (as an NTP step or an operator would). */
function steppedClock(): Clock & { offset: number } {
  const clock = { offset: 0, now: () => Date.now() + clock.offset, monotonic: () => performance.now() };
  return clock;
}

test('a retry due in 1 s is made 1 s later although the wall clock stepped back an hour', async (t) => {
  const receiver = await startReceiver();
  receiver.script(500);
  const clock = steppedClock();
  const d = await startTestDaemon({ clock, config: { webhooks: { allowPrivateTargets: true, retryDelaysMs: [1_000] } } });
  t.teardown(async () => {
    await d.close();
    await receiver.close();
  });
  const inst = await d.connectedSandbox();
  await setWebhook(d, inst, receiver.url);
  await inbound(d, inst, '+15551234567', 'retry me');
  await receiver.waitForCount(1);
  clock.offset = -3_600_000;
  const [, retried] = await receiver.waitForCount(2, 8_000);
  t.is(retried!.json.data.text, 'retry me');
  // What is stored and shown stays on the wall clock.
  const [record] = await waitForOutbox(d.dataDir, inst.id, (r) => r[0]?.status === 'delivered');
  t.true(Date.parse(record!.deliveredAt!) < Date.now() - 3_000_000, 'deliveredAt is the (stepped) wall time');
});

test('a restarted daemon does not wait for a nextAttemptAt written while the clock was an hour ahead', async (t) => {
  const receiver = await startReceiver({ reply: 503 });
  const ahead = steppedClock();
  ahead.offset = 3_600_000;
  const config = { webhooks: { allowPrivateTargets: true, retryDelaysMs: Array.from({ length: 20 }, () => 200) } };
  const first = await startTestDaemon({ clock: ahead, config });
  let second: TestDaemon | null = null;
  t.teardown(async () => {
    await second?.close();
    await first.close();
    await receiver.close();
  });
  const inst = await first.connectedSandbox();
  await setWebhook(first, inst, receiver.url);
  await inbound(first, inst, '+15551234567', 'after the restart');
  const [stored] = await waitForOutbox(first.dataDir, inst.id, (r) => (r[0]?.attempts ?? 0) >= 1);
  t.true(Date.parse(stored!.nextAttemptAt!) > Date.now() + 3_000_000, 'its next attempt lies an hour ahead of the real clock');
  await first.daemon.close();

  receiver.setDefault(200);
  const attempts = receiver.requests.length;
  second = await startTestDaemon({ dataDir: first.dataDir });
  await receiver.waitForCount(attempts + 1, 8_000);
  await waitForOutbox(first.dataDir, inst.id, (r) => r[0]?.status === 'delivered');
  t.pass();
});
