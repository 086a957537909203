import '../protocol-double/preload.js';
import test from 'ava';
import { createHook } from 'node:async_hooks';
import { DEFAULT_CONNECTION_CONFIG, initAuthCreds, jidNormalizedUser, makeWASocket, type AuthenticationCreds, type ConnectionState, type SignalKeyStore, type WASocket } from '@whiskeysockets/baileys';
import { pino } from 'pino';
import { ProtocolDouble } from '../protocol-double/index.js';
import { addressBook, REALISTIC_ACCOUNT } from '../protocol-double/account-data.js';
import { cdnDispatcher } from '../protocol-double/cdn.mjs';
import { memoryKeys } from '../protocol-double/keys.js';
import { waitFor } from '../helpers/daemon.js';
import { boundedSignalRepository } from '../../src/connection/baileys/lid-mapping-cache.js';
import { BoundedMap } from '../../src/connection/baileys/lru.js';

// Rule: a session's memory stays bounded and costs no timer per LID mapping. Real Baileys pairs a
// realistic account (300 contacts, each with its LID) against the protocol double, with the
// signal repository the gateway gives it (lid-mapping-cache.ts) bounded here to 100 entries: every
// mapping still resolves both ways (from the key store past the bound), and no lru-cache purge
// timer is armed for them. Baileys' own repository armed 1,251 (one per entry, again at reads).

DEFAULT_CONNECTION_CONFIG.defaultQueryTimeoutMs = 5000;
const BOUND = 100;

interface Client {
  sock: WASocket;
  conn: Partial<ConnectionState>[];
}

async function connect(double: ProtocolDouble, creds: AuthenticationCreds, keys: SignalKeyStore): Promise<Client> {
  const sock = makeWASocket({
    auth: { creds, keys },
    logger: pino({ level: 'silent' }),
    waWebSocketUrl: double.url,
    markOnlineOnConnect: false,
    makeSignalRepository: boundedSignalRepository(BOUND),
    options: { dispatcher: await cdnDispatcher(double.media.hostname) } as RequestInit,
  });
  const c: Client = { sock, conn: [] };
  sock.ev.on('connection.update', (u) => c.conn.push(u));
  sock.ev.on('creds.update', (u) => Object.assign(creds, u));
  return c;
}

test('LID mappings of a realistic first sync: a bounded cache, no timer each, every mapping still resolves', async (t) => {
  // lru-cache's purge timers: one per entry, armed for the entry's TTL (Baileys': 3 days).
  let purgeTimers = 0;
  const hook = createHook({
    init(_id, type, _trigger, resource) {
      if (type === 'Timeout' && ((resource as { _idleTimeout?: number })._idleTimeout ?? 0) > 86_400_000) purgeTimers += 1;
    },
  }).enable();
  const double = await ProtocolDouble.start({ accountData: 'realistic' });
  const creds = initAuthCreds();
  const store = memoryKeys();
  let c: Client | undefined;
  try {
    const first = await connect(double, creds, store);
    const qr = await waitFor(() => first.conn.find((u) => u.qr)?.qr, 10_000, 'a QR');
    const device = await double.scan(qr);
    await waitFor(() => first.conn.some((u) => u.connection === 'close'), 10_000, 'the 515 close');
    c = await connect(double, creds, store);
    await waitFor(() => c!.conn.some((u) => u.connection === 'open'), 10_000, 'open');
    await double.synced(device, 30_000);
    await waitFor(() => (creds.accountSyncCounter ?? 0) > 0, 30_000, 'the end of the initial sync');

    const book = addressBook(REALISTIC_ACCOUNT.contacts);
    await waitFor(async () => Object.keys(await store.get('lid-mapping', book.map((b) => b.phone))).length === book.length, 10_000, 'every mapping stored');
    const lidMapping = c.sock.signalRepository.lidMapping;
    const cache = (lidMapping as unknown as { mappingCache: unknown }).mappingCache;
    t.true(cache instanceof BoundedMap, 'the gateway’s cache is in place');
    for (const b of book) {
      t.is(await lidMapping.getLIDForPN(b.jid), b.lid, b.jid);
      // Baileys answers with the device (`:0`) of the LID asked for.
      t.is(jidNormalizedUser((await lidMapping.getPNForLID(b.lid)) ?? ''), b.jid, b.lid);
    }
    t.true((cache as BoundedMap<string, string>).size <= BOUND, `cache holds ${(cache as BoundedMap<string, string>).size}`);
    t.true(book.length * 2 > BOUND, 'the account has more mappings than the bound');
    t.true(purgeTimers < 20, `${purgeTimers} lru-cache purge timers armed`);
    t.deepEqual(double.errors, []);
  } finally {
    hook.disable();
    if (c) {
      const closed = new Promise<void>((resolve) => c!.sock.ev.on('connection.update', (u) => u.connection === 'close' && resolve()));
      void c.sock.end(undefined);
      await closed;
    }
    await double.close();
  }
});
