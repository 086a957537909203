/**
 * Guards issue 21 item 15: a connection that gives up after retrying reports it although its
 * status stays `disconnected`: one last instance.status (`disconnected` -> `disconnected`, the
 * reason says it gave up), while the retries before it send none. Real Baileys against a server
 * that hangs up on every connection.
 */
import test from 'ava';
import { createServer, type AddressInfo } from 'node:net';
import { startTestDaemon, waitFor } from '../helpers/daemon.js';
import { startReceiver } from '../helpers/receiver.js';

test('the give-up after retries is one final instance.status with the reason', async (t) => {
  const hangUp = createServer((s) => s.destroy());
  await new Promise<void>((resolve) => hangUp.listen(0, '127.0.0.1', resolve));
  t.teardown(() => hangUp.close());
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const d = await startTestDaemon({
    config: { baileys: { webSocketUrl: `ws://127.0.0.1:${(hangUp.address() as AddressInfo).port}/ws/chat`, maxReconnectAttempts: 3, reconnectBaseMs: 50, reconnectMaxMs: 50 } },
  });
  t.teardown(() => d.close());
  const inst = await d.createInstance({ sandbox: false, webhookUrl: receiver.url });
  const events = (): Array<{ from: unknown; to: unknown; reason: unknown }> =>
    receiver.requests.filter((r) => r.json.type === 'instance.status').map((r) => r.json.data as { from: unknown; to: unknown; reason: unknown });
  await waitFor(() => events().some((e) => String(e.reason).startsWith('gave up')), 20_000, `the give-up; ${JSON.stringify(events())}`);
  await new Promise((r) => setTimeout(r, 300));
  t.deepEqual(
    events().map((e) => `${String(e.from)}>${String(e.to)}`),
    ['initializing>disconnected', 'disconnected>disconnected'],
  );
  t.regex(String(events()[0]!.reason), /; retry 1 of 3 in 1 s$/);
  t.is(events()[1]!.reason, 'gave up after 3 failed reconnects (last: connection closed (408)) (socket hang up)');
  const status = (await d.request('GET', `/api/${inst.id}/status`, { key: inst.key })).body as { status: string; reason: string };
  t.is(status.status, 'disconnected');
  t.is(status.reason, String(events()[1]!.reason));
});
