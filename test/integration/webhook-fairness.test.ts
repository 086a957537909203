/**
 * Guards issue 21 item 3: one tenant's dead receiver must not delay every other tenant. Instance A's
 * receiver never answers and A has a backlog in 30 chats; A may hold at most its share of
 * webhooks.concurrency (here 14 of 16: an eighth stays free), so instance B's event goes out at
 * once instead of after A's attempts time out (before: A took every slot, round after round, and
 * another instance's event arrived 49 s late).
 */
import test from 'ava';
import { startTestDaemon } from '../helpers/daemon.js';
import { inbound, setWebhook, startReceiver } from '../helpers/receiver.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a receiver that hangs holds only its instance\'s share of the slots; another instance is delivered at once', async (t) => {
  const hung = await startReceiver({ reply: 'hang' });
  const healthy = await startReceiver();
  const d = await startTestDaemon({
    webhooks: { stopGraceMs: 10 },
    // Attempts to A hang until they time out after 30 s: far longer than B may wait.
    config: { webhooks: { allowPrivateTargets: true, concurrency: 16, timeoutMs: 30_000, retryDelaysMs: [60_000] } },
  });
  t.teardown(async () => {
    await d.close();
    await hung.close();
    await healthy.close();
  });
  const a = await d.connectedSandbox();
  const b = await d.connectedSandbox();
  await setWebhook(d, a, hung.url);
  await setWebhook(d, b, healthy.url);
  for (let i = 0; i < 30; i++) await inbound(d, a, `+1555000${1000 + i}`, `a${i}`);
  await hung.waitForCount(14, 10_000);
  await sleep(200);
  t.is(hung.requests.length, 14, 'A alone holds 14 of the 16 slots, not all of them');

  await inbound(d, b, '+15559990000', 'b0');
  const [delivered] = await healthy.waitForCount(1, 10_000);
  t.is(delivered!.json.data.text, 'b0');
  t.is(hung.maxConcurrent, 14);
  t.true(hung.requests.length <= 14, "A's attempts are still hanging: B did not wait for them");
});
