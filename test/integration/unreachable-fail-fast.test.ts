/**
 * Guards issue 21 item 16: when WhatsApp cannot be reached at all (DNS, refused, TLS) the status
 * reason says so with the cause (it said "connection closed (408), retrying"), and
 * `POST /api/{id}/pairing-code` fails at once with that cause instead of waiting 60 s for "WhatsApp
 * did not offer pairing in time; try again". Real Baileys in a real daemon, against local
 * addresses that fail each way.
 */
import test from 'ava';
import { readFile } from 'node:fs/promises';
import { createServer as createHttpsServer } from 'node:https';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { startTestDaemon, waitFor } from '../helpers/daemon.js';

const RETRY_FAST = { reconnectBaseMs: 50, reconnectMaxMs: 200, maxReconnectAttempts: 20 };

async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `ws://127.0.0.1:${port}/ws/chat`;
}

/** The reason GET /status shows once the connection failed at least once. */
async function statusReason(webSocketUrl: string): Promise<{ status: string; reason: string }> {
  const d = await startTestDaemon({ config: { baileys: { webSocketUrl, ...RETRY_FAST } } });
  try {
    const { id, key } = await d.createInstance({ sandbox: false });
    return await waitFor(
      async () => {
        const body = (await d.request('GET', `/api/${id}/status`, { key })).body as { status: string; reason: string | null };
        return typeof body.reason === 'string' && body.reason.includes('; retry ') ? { status: body.status, reason: body.reason } : null;
      },
      20_000,
      'a retry',
    );
  } finally {
    await d.close();
  }
}

test('a name that does not resolve is named in the status reason, not shown as 408', async (t) => {
  const { status, reason } = await statusReason('wss://gateway-test.invalid/ws/chat');
  t.is(status, 'disconnected');
  t.regex(reason, /^WhatsApp cannot be reached \(getaddrinfo (ENOTFOUND|EAI_AGAIN) gateway-test\.invalid\); retry \d+ of 20\b/);
  t.notRegex(reason, /408/);
});

test('a refused connection is named in the status reason', async (t) => {
  const { reason } = await statusReason(await closedPortUrl());
  t.regex(reason, /^WhatsApp cannot be reached \(connect ECONNREFUSED 127\.0\.0\.1:\d+\); retry \d+ of 20\b/);
});

test('a certificate that does not verify is named in the status reason', async (t) => {
  const tls = fileURLToPath(new URL('../protocol-double/tls/', import.meta.url));
  // Signed by the double's own CA, which Node does not trust.
  const server = createHttpsServer({ cert: await readFile(`${tls}media-cert.pem`), key: await readFile(`${tls}media-key.pem`) });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const { reason } = await statusReason(`wss://127.0.0.1:${(server.address() as AddressInfo).port}/ws/chat`);
  t.regex(reason, /^WhatsApp cannot be reached \(.*(UNABLE_TO_|CERT_|SELF_SIGNED|ERR_TLS_|HOSTNAME).*\); retry /);
});

test('POST /pairing-code fails at once with the cause when WhatsApp cannot be reached', async (t) => {
  const d = await startTestDaemon({ config: { baileys: { webSocketUrl: await closedPortUrl(), ...RETRY_FAST } } });
  t.teardown(() => d.close());
  const { id, key } = await d.createInstance({ sandbox: false });
  // Without the fail-fast this waits the full 60 s for a socket that offers pairing.
  const res = await d.request('POST', `/api/${id}/pairing-code`, { key, json: { phone: '+15551234567' }, timeoutMs: 30_000 });
  t.is(res.status, 503);
  t.is((res.body as { error: { code: string } }).error.code, 'CONNECTION_NOT_READY');
  t.regex((res.body as { error: { message: string } }).error.message, /^WhatsApp cannot be reached: connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
});
