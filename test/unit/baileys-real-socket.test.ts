import test from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BaileysConnection } from '../../src/connection/baileys/connection.js';
import type { StatusChange } from '../../src/connection/types.js';
import { fastSettings, silent, waitFor } from './baileys-fake-socket.js';
import { FileAuthStates } from '../../src/storage/files/auth-state.js';
import { UNGUARDED } from '../../src/fs/write-guard.js';

// The real makeWASocket against a local endpoint that hangs up at once: no WhatsApp, no network.
// It shows the options we pass are accepted and that real closes drive the reconnect policy.
test('real Baileys socket: refused connections back off, then give up; stop() leaves nothing running', async (t) => {
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-real-'));
  const statuses: StatusChange[] = [];
  const conn = new BaileysConnection(
    'real-1',
    { onStatus: (c) => statuses.push(c), onQr: () => undefined, onMessage: async () => undefined, onUpdate: async () => undefined },
    {
      auth: new FileAuthStates(join(dataDir, 'auth'), UNGUARDED),
      logger: silent,
      settings: { ...fastSettings, webSocketUrl: `ws://127.0.0.1:${port}/ws/chat`, maxReconnectAttempts: 2 },
      random: () => 0,
    },
  );
  try {
    conn.start();
    await waitFor(() => /gave up/.test(conn.reason ?? ''), 'give-up', 5000);
    t.is(conn.status, 'disconnected');
    t.deepEqual(
      statuses.map((s) => `${s.to}/${s.next ?? ''}`),
      // One change of status; each retry and the give-up are reports under the same status
      // (issue 21), which the status reporter turns into no instance.status per retry (issue 12:
      // 91 status webhooks in 20 minutes) and one for the give-up.
      ['disconnected/retrying', 'disconnected/retrying', 'disconnected/gave-up'],
    );
  } finally {
    await conn.stop();
    server.close();
    await rm(dataDir, { recursive: true, force: true });
  }
});
