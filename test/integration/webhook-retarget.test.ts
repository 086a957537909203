/**
 * Guards issue 21 item 5: a fixed receiver does not wait for the old backoff. After 5xx answers
 * the instance's deliveries wait 5 minutes; a test event (POST /webhook/test) is attempted at once
 * all the same (a lane of its own, not behind the instance lane's failed head), and a new URL (PUT
 * /webhook) makes every pending delivery due now (before: they arrived 73 s later, behind the
 * failed head of the lane).
 */
import test from 'ava';
import { startTestDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { setWebhook, startReceiver, type Receiver } from '../helpers/receiver.js';

/** An instance whose instance-wide and chat events failed once against `broken`: both wait 5 minutes now. */
async function inBackoff(d: TestDaemon, broken: Receiver): Promise<{ id: string; key: string }> {
  const inst = await d.connectedSandbox();
  await setWebhook(d, inst, broken.url, { events: null });
  for (const path of ['sandbox/disconnect', 'sandbox/scan']) t200(await d.request('POST', `/api/${inst.id}/${path}`, { key: inst.key }));
  t200(await d.request('POST', `/api/${inst.id}/sandbox/inbound`, { key: inst.key, json: { from: '+15551234567', message: 'held' } }));
  await waitFor(() => broken.requests.some((r) => r.json.type === 'message.received') && broken.requests.some((r) => r.json.type === 'instance.status'), 5_000, 'the first attempts');
  return inst;
}

function t200(res: { status: number; body: unknown }): void {
  if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
}

const config = { webhooks: { allowPrivateTargets: true, retryDelaysMs: [300_000, 300_000] } };

test('a test event is attempted at once while the instance lane waits out its backoff', async (t) => {
  const broken = await startReceiver({ reply: 503 });
  const d = await startTestDaemon({ config });
  t.teardown(async () => {
    await d.close();
    await broken.close();
  });
  const inst = await inBackoff(d, broken);
  const failedSoFar = broken.requests.length;
  t.is((await d.request('POST', `/api/${inst.id}/webhook/test`, { key: inst.key })).status, 200);
  await waitFor(() => broken.requests.some((r) => r.json.type === 'webhook.test'), 5_000, 'the test event attempted at once, whatever waits in the instance lane');
  t.is(broken.requests.length, failedSoFar + 1, 'only the test event: the others keep their backoff');
});

test('a new webhook URL makes the pending deliveries due now', async (t) => {
  const broken = await startReceiver({ reply: 503 });
  const fixed = await startReceiver();
  const d = await startTestDaemon({ config });
  t.teardown(async () => {
    await d.close();
    await broken.close();
    await fixed.close();
  });
  const inst = await inBackoff(d, broken);
  const deliveries = async () => (await d.request('GET', `/api/${inst.id}/webhook/deliveries`, { key: inst.key })).body.counts as { pending: number; delivered: number };
  const before = await deliveries();
  t.true(before.pending >= 3, JSON.stringify(before));
  // The same URL again changes nothing: the backoff stays.
  await setWebhook(d, inst, broken.url, { events: null });
  await new Promise((r) => setTimeout(r, 300));
  t.is((await deliveries()).pending, before.pending);
  // The receiver moves: every pending delivery goes to the new URL now.
  await setWebhook(d, inst, fixed.url, { events: null });
  await waitFor(async () => (await deliveries()).pending === 0, 5_000, 'the pending deliveries delivered at the new URL');
  t.is(fixed.requests.length, before.pending);
  t.true(fixed.requests.some((r) => r.json.type === 'message.received'));
  t.true(fixed.requests.some((r) => r.json.type === 'instance.status'));
});
