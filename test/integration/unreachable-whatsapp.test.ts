/**
 * Guards issue 12, "A WhatsApp instance with no route to WhatsApp shows only `connection closed
 * (408), retrying`": the cause (here a DNS failure, as with no route to web.whatsapp.com) is in
 * the status `reason`, and the instance stays `disconnected` while it retries (it does not flap
 * through statuses, so no instance.status storm). Real Baileys, pointed at a name that cannot resolve.
 */
import test from 'ava';
import { startTestDaemon } from '../helpers/daemon.js';

test('an unreachable WhatsApp shows the cause in the status reason', async (t) => {
  const d = await startTestDaemon({
    config: { baileys: { webSocketUrl: 'wss://gateway-test.invalid/ws/chat', reconnectBaseMs: 50, reconnectMaxMs: 200, maxReconnectAttempts: 20 } },
  });
  t.teardown(() => d.close());
  const { id, key } = await d.createInstance({ sandbox: false });
  let status: { status?: string; reason?: string | null } = {};
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    status = (await d.request('GET', `/api/${id}/status`, { key })).body;
    if (typeof status.reason === 'string' && /ENOTFOUND|EAI_AGAIN/.test(status.reason)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  t.regex(String(status.reason), /ENOTFOUND|EAI_AGAIN/, JSON.stringify(status));
  t.regex(String(status.reason), /gateway-test\.invalid/);
  t.is(status.status, 'disconnected');
});
