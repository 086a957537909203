import test from 'ava';
import { rm } from 'node:fs/promises';
import { Curve } from '@whiskeysockets/baileys';
import { startChildDaemon } from '../helpers/child-daemon.js';
import { prepareDataDir, request, tempDir, waitFor } from '../helpers/daemon.js';
import { FAST_BAILEYS } from '../protocol-double/harness.js';
import { childPreloadEnv, ProtocolDouble, type ProtocolDoubleOptions } from '../protocol-double/index.js';

// Issue 21 item 2: the built daemon (`bin/gateway start`, a child process: `npm run build` first)
// refuses a server whose Noise certificate chain does not verify. The check is the daemon's own
// (src/connection/baileys/curve-verify.ts); the child gets only the test root key (preload-child.mjs).
// Baileys rc14 alone would have shown a QR here: its signature check accepted anything. The
// messages are Baileys' own, raised only when a signature check answers false.

async function refusedBy(certChain: ProtocolDoubleOptions['certChain'], message: string): Promise<{ sessions: number; pastHandshake: number; qrStatus: number; reason: string }> {
  const double = await ProtocolDouble.start({ certChain });
  const dataDir = await tempDir('gw-double-cert-');
  try {
    const secret = await prepareDataDir(dataDir, { baileys: { ...FAST_BAILEYS, logLevel: 'warn', webSocketUrl: double.url } });
    const daemon = await startChildDaemon(dataDir, [], childPreloadEnv());
    try {
      const created = await request(daemon.url, 'POST', '/api/instances/create', { secret, json: { sandbox: false } });
      if (created.status !== 201) throw new Error(`create failed: ${created.status} ${JSON.stringify(created.body)}`);
      const { instanceId: id, apiKey: key } = created.body as { instanceId: string; apiKey: string };
      let last = '';
      const reason = await waitFor(
        async () => {
          const res = await request(daemon.url, 'GET', `/api/${id}/status`, { key });
          last = JSON.stringify(res.body);
          const r = (res.body as { reason?: string | null }).reason ?? '';
          return double.sessions.length >= 2 && r.includes(message) ? r : null;
        },
        20_000,
        'two refused handshakes',
      ).catch((err: Error) => {
        throw new Error(`${err.message}; last status ${last}; daemon stderr:\n${daemon.stderr().slice(-2000)}`);
      });
      const qr = await request(daemon.url, 'GET', `/api/${id}/qr-code`, { key });
      return {
        sessions: double.sessions.length,
        pastHandshake: double.sessions.filter((s) => s.kind !== null).length,
        qrStatus: qr.status,
        reason,
      };
    } finally {
      daemon.kill('SIGKILL');
      await daemon.exited;
    }
  } finally {
    await double.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

test('the built daemon refuses a chain not signed by the installed root: no registration, no QR', async (t) => {
  const r = await refusedBy({ root: Curve.generateKeyPair() }, 'noise intermediate certificate signature invalid');
  t.true(r.sessions >= 2);
  t.is(r.pastHandshake, 0, 'no session got past the Noise handshake');
  t.not(r.qrStatus, 200);
  t.regex(r.reason, /400/);
});

test('the built daemon refuses a chain whose leaf signature is tampered with (intermediate sound)', async (t) => {
  const r = await refusedBy({ tamper: 'leaf-signature' }, 'noise certificate signature invalid');
  t.is(r.pastHandshake, 0, 'no session got past the Noise handshake');
  t.not(r.qrStatus, 200);
});
