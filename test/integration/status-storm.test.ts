/**
 * Guards issue 12, "An instance whose WhatsApp cannot be reached sent 91 instance.status webhooks in
 * 20 minutes": a status event is emitted when the public status changes, not on every retry. Real
 * Baileys against a name that cannot resolve, retrying every 20-100 ms: many retries, one change.
 */
import test from 'ava';
import { capturingLogger, startTestDaemon } from '../helpers/daemon.js';
import { startReceiver } from '../helpers/receiver.js';

test.serial('an unreachable WhatsApp retrying many times sends one instance.status per real change', async (t) => {
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const d = await startTestDaemon({
    config: {
      webhooks: { allowPrivateTargets: true },
      baileys: { webSocketUrl: 'wss://gateway-test.invalid/ws/chat', reconnectBaseMs: 20, reconnectMaxMs: 100, maxReconnectAttempts: 1000 },
    },
  });
  t.teardown(() => d.close());
  const { id, key } = await d.createInstance({ sandbox: false, webhookUrl: receiver.url });
  // Let it fail and retry for a while.
  let reason = '';
  const until = Date.now() + 4_000;
  while (Date.now() < until) {
    reason = String((await d.request('GET', `/api/${id}/status`, { key })).body.reason);
    await new Promise((r) => setTimeout(r, 200));
  }
  t.regex(reason, /ENOTFOUND|EAI_AGAIN/);
  await new Promise((r) => setTimeout(r, 300));
  const statuses = receiver.requests.filter((r) => r.json.type === 'instance.status').map((r) => `${String(r.json.data.from)}->${String(r.json.data.to)}`);
  t.log(statuses.join(', '));
  t.true(statuses.length <= 2, `at most initializing->disconnected and nothing per retry: ${statuses.join(', ')}`);
  for (let i = 1; i < statuses.length; i++) t.not(statuses[i], statuses[i - 1], 'no repeated transition');
});

test.serial('each status change of that instance is logged once, at info', async (t) => {
  // Guards issue 12, "each change was logged twice": the status reporter logs the change; the
  // connection's own line is debug, so at info each change appears once.
  const log = capturingLogger('info');
  const d = await startTestDaemon({
    logger: log.logger,
    config: { baileys: { webSocketUrl: 'wss://gateway-test.invalid/ws/chat', reconnectBaseMs: 20, reconnectMaxMs: 100, maxReconnectAttempts: 1000 } },
  });
  t.teardown(() => d.close());
  const { id, key } = await d.createInstance({ sandbox: false });
  const until = Date.now() + 2_000;
  while (Date.now() < until) {
    await d.request('GET', `/api/${id}/status`, { key });
    await new Promise((r) => setTimeout(r, 200));
  }
  const mine = log.lines.filter((l) => l.instanceId === id && typeof l.to === 'string');
  const changes = mine.map((l) => `${String(l.from)}->${String(l.to)}`);
  t.log(changes.join(', '));
  t.true(changes.length >= 1, 'the change to disconnected is logged');
  t.is(new Set(changes).size, changes.length, `no change logged twice: ${changes.join(', ')}`);
  t.true(mine.every((l) => l.msg === 'instance status'), 'one logger of status changes');
});
