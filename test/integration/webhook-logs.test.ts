/**
 * Guards issue 21 item 13: a receiver's error body never reaches the log (it may carry the
 * receiver's data: here a customer's phone and order). The log says the status and the body's
 * size; the body's first words stay in the delivery's lastError, which only the instance reads
 * (GET /webhook/deliveries). Before: its first 200 characters were logged at warn and error.
 */
import test from 'ava';
import { capturingLogger, startTestDaemon } from '../helpers/daemon.js';
import { inbound, setWebhook, startReceiver, waitForOutbox } from '../helpers/receiver.js';

const BODY = 'order 4711 for +15550001111 refused: card declined';

test('a failed attempt logs the status and the size of the answer, never its body', async (t) => {
  const receiver = await startReceiver({ reply: { status: 422, body: BODY } });
  const { logger, lines } = capturingLogger('debug');
  const d = await startTestDaemon({ logger, config: { webhooks: { allowPrivateTargets: true, retryDelaysMs: [50] } } });
  t.teardown(async () => {
    await d.close();
    await receiver.close();
  });
  const inst = await d.connectedSandbox();
  await setWebhook(d, inst, receiver.url);
  await inbound(d, inst, '+15551234567', 'hello');
  const [record] = await waitForOutbox(d.dataDir, inst.id, (r) => r[0]?.status === 'failed');
  t.is(record!.lastError, `HTTP 422: ${BODY}`, 'the instance sees what its receiver said');
  const listed = await d.request('GET', `/api/${inst.id}/webhook/deliveries`, { key: inst.key });
  t.is(listed.body.deliveries[0].lastError, `HTTP 422: ${BODY}`);

  const text = lines.map((l) => JSON.stringify(l)).join('\n');
  for (const word of ['4711', '15550001111', 'card declined']) t.false(text.includes(word), `the log never carries the body (${word})`);
  const retry = lines.find((l) => l.msg === 'webhook attempt failed; will retry');
  const failed = lines.find((l) => l.msg === 'webhook delivery failed after its last attempt');
  for (const line of [retry, failed]) {
    t.like(line, { instanceId: inst.id, status: 422, error: 'HTTP 422', bodyBytes: Buffer.byteLength(BODY) });
  }
  t.is(retry!.level, 40, 'warn');
});
