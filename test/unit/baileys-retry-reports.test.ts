/**
 * Guards issue 21 items 15 and 16: a connection that retries while `disconnected` reports every
 * retry with its cause (`gateway pair` said "retrying in 1 s" once, then nothing for ten minutes),
 * and its give-up is reported even though the status stays `disconnected` (`gateway pair` never
 * exited, and no final instance.status was sent). A socket that never reached WhatsApp (DNS,
 * refused, TLS) is named as such, not as "408", and a pairing-code request fails at once.
 */
import test from 'ava';
import { GatewayError } from '../../src/domain/errors.js';
import { boom, makeHarness, waitFor } from './baileys-fake-socket.js';

/** A close as Baileys reports a WebSocket error: a Boom (408 for any E... code) keeping the error as `data`. */
function wsError(code: string, message: string, statusCode = 408): Error {
  return Object.assign(boom(statusCode, `WebSocket Error (${message})`), { data: Object.assign(new Error(message), { code }) });
}

test('each retry is reported with its cause, and the give-up after them too', async (t) => {
  const h = await makeHarness({ settings: { maxReconnectAttempts: 3, reconnectBaseMs: 5, reconnectMaxMs: 5 } });
  h.conn.start();
  for (let n = 1; n <= 4; n++) await (await h.socket(n)).close(503);
  await waitFor(() => h.statuses.some((c) => c.next === 'gave-up'), 'the give-up reported');
  const disconnected = h.statuses.filter((c) => c.to === 'disconnected');
  t.deepEqual(
    disconnected.map((c) => c.next),
    ['retrying', 'retrying', 'retrying', 'gave-up'],
  );
  t.deepEqual(
    disconnected.map((c) => c.reason),
    [
      'connection closed (503) (closed with 503); retry 1 of 3 in 1 s',
      'connection closed (503) (closed with 503); retry 2 of 3 in 1 s',
      'connection closed (503) (closed with 503); retry 3 of 3 in 1 s',
      'gave up after 3 failed reconnects (last: connection closed (503)) (closed with 503)',
    ],
  );
  // From the second close on, the status was `disconnected` already: reported all the same.
  t.is(disconnected[3]!.from, 'disconnected');
  t.is(h.conn.reason, disconnected[3]!.reason ?? null);
  await h.cleanup();
});

test('a socket that never reached WhatsApp is named as unreachable, with the cause', async (t) => {
  const h = await makeHarness({ settings: { reconnectBaseMs: 5, reconnectMaxMs: 5 } });
  h.conn.start();
  await (await h.socket(1)).end(wsError('ENOTFOUND', 'getaddrinfo ENOTFOUND web.whatsapp.com'));
  const change = h.statuses.at(-1)!;
  t.is(change.to, 'disconnected');
  t.is(change.next, 'retrying');
  t.is(change.unreachable, 'getaddrinfo ENOTFOUND web.whatsapp.com');
  t.is(change.reason, 'WhatsApp cannot be reached (getaddrinfo ENOTFOUND web.whatsapp.com); retry 1 of 4 in 1 s');
  t.notRegex(h.conn.reason ?? '', /408/);
  await h.cleanup();
});

test('a pairing-code request fails at once when WhatsApp cannot be reached', async (t) => {
  // The wait for a socket that offers pairing would be 60 s; the failure must not wait for it.
  const h = await makeHarness({ pairingTimeoutMs: 60_000, settings: { reconnectBaseMs: 5, reconnectMaxMs: 5 } });
  const pending = h.conn.requestPairingCode('+15551234567');
  await (await h.socket(1)).end(wsError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:9'));
  const err = await t.throwsAsync(pending, { instanceOf: GatewayError });
  t.is(err?.code, 'CONNECTION_NOT_READY');
  t.is(err?.message, 'WhatsApp cannot be reached: connect ECONNREFUSED 127.0.0.1:9');
  await h.cleanup();
});

test('a close after WhatsApp answered is not called unreachable', async (t) => {
  const h = await makeHarness({ settings: { reconnectBaseMs: 5, reconnectMaxMs: 5 } });
  h.conn.start();
  const s1 = await h.socket(1);
  s1.qr('Q');
  await s1.end(boom(408, 'QR refs attempts ended'));
  const change = h.statuses.at(-1)!;
  t.is(change.unreachable, undefined);
  t.regex(change.reason ?? '', /^connection closed \(408\) \(QR refs attempts ended\); retry 1 of 4 in 1 s$/);
  await h.cleanup();
});
