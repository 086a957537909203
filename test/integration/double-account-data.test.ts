import '../protocol-double/preload.js';
import test from 'ava';
import { createHook } from 'node:async_hooks';
import { Writable } from 'node:stream';
import {
  DEFAULT_CONNECTION_CONFIG,
  initAuthCreds,
  jidNormalizedUser,
  makeWASocket,
  type AuthenticationCreds,
  type BaileysEventMap,
  type ConnectionState,
  type LTHashState,
  type SignalKeyStore,
  type WASocket,
} from '@whiskeysockets/baileys';
import { pino } from 'pino';
import { ProtocolDouble } from '../protocol-double/index.js';
import { COLLECTIONS } from '../protocol-double/app-state.js';
import { addressBook, PUSH_NAME_ONLY, REALISTIC_ACCOUNT } from '../protocol-double/account-data.js';
import { cdnDispatcher } from '../protocol-double/cdn.mjs';
import { memoryKeys } from '../protocol-double/keys.js';
import { waitFor } from '../helpers/daemon.js';
import { boundedSignalRepository } from '../../src/connection/baileys/lid-mapping-cache.js';
import { BoundedMap } from '../../src/domain/bounded-map.js';

// A realistic account (accountData: 'realistic') through bare Baileys: the phone's app-state key
// share, history syncs of 200 chats / 2,000 messages (inline bootstrap, RECENT and PUSH_NAME as
// encrypted blobs fetched from "mmg.whatsapp.net", i.e. the double's media host through
// cdnDispatcher), app-state snapshots and patches for every collection, and the first messages of
// members in 5 groups. Baileys must take all of it without a MAC or decryption failure.
//
// Baileys runs with the signal repository the gateway gives it (lid-mapping-cache.ts), its LID
// cache bounded here to LID_BOUND entries, below the account's 600: every mapping still resolves
// both ways (from the key store past the bound), and no lru-cache purge timer is armed for them
// (Baileys' own repository armed 1,251 in this sync: one per entry, again at every read).

// Baileys never clears the timers of queries pending when a socket ends (60 s by default).
DEFAULT_CONNECTION_CONFIG.defaultQueryTimeoutMs = 5000;
const LID_BOUND = 100;

interface Client {
  sock: WASocket;
  events: { [K in keyof BaileysEventMap]?: BaileysEventMap[K][] };
  conn: Partial<ConnectionState>[];
}

/** Baileys' own log, kept: its app-state checks only warn when a MAC does not match. */
const logLines: Array<{ level: number; msg: string }> = [];
const logger = pino(
  { level: process.env.PROTOCOL_DOUBLE_DEBUG === '1' ? 'debug' : 'info' },
  new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        const parsed = JSON.parse(line) as { level: number; msg?: string };
        logLines.push({ level: parsed.level, msg: `${parsed.msg ?? ''} ${line}` });
        if (process.env.PROTOCOL_DOUBLE_DEBUG === '1') console.error(line);
      }
      cb();
    },
  }),
);

const WATCHED = ['connection.update', 'creds.update', 'messaging-history.set', 'contacts.upsert', 'contacts.update', 'chats.update', 'labels.edit', 'labels.association', 'messages.upsert', 'settings.update'] as const;

async function connect(double: ProtocolDouble, creds: AuthenticationCreds, keys: SignalKeyStore): Promise<Client> {
  const sock = makeWASocket({
    auth: { creds, keys },
    logger,
    waWebSocketUrl: double.url,
    markOnlineOnConnect: false,
    makeSignalRepository: boundedSignalRepository(LID_BOUND),
    // Off by default in Baileys (the gateway leaves it off): here every value, index, snapshot and patch MAC is checked.
    appStateMacVerification: { patch: true, snapshot: true },
    options: { dispatcher: await cdnDispatcher(double.media.hostname) } as RequestInit,
  });
  const c: Client = { sock, events: {}, conn: [] };
  for (const name of WATCHED) {
    const record = (e: unknown): void => void ((c.events[name] ??= []) as unknown[]).push(e);
    sock.ev.on(name, record as never);
  }
  sock.ev.on('connection.update', (u) => c.conn.push(u));
  sock.ev.on('creds.update', (u) => Object.assign(creds, u));
  return c;
}

const close = async (c: Client) => {
  const closed = new Promise<void>((resolve) => c.sock.ev.on('connection.update', (u) => u.connection === 'close' && resolve()));
  void c.sock.end(undefined);
  await closed;
};

test('a realistic account: history, contacts, LID mappings, app state with verified MACs, group sender keys', async (t) => {
  // lru-cache's purge timers: one per entry, armed for the entry's TTL (Baileys': 3 days).
  let purgeTimers = 0;
  const hook = createHook({
    init(_id, type, _trigger, resource) {
      if (type === 'Timeout' && ((resource as { _idleTimeout?: number })._idleTimeout ?? 0) > 86_400_000) purgeTimers += 1;
    },
  }).enable();
  t.teardown(() => hook.disable());
  const double = await ProtocolDouble.start({ accountData: 'realistic' });
  const creds = initAuthCreds();
  const store = memoryKeys();
  let c: Client | undefined;
  try {
    const first = await connect(double, creds, store);
    const qr = await waitFor(() => first.conn.find((u) => u.qr)?.qr, 10_000, 'a QR');
    const device = await double.scan(qr);
    await waitFor(() => first.conn.some((u) => u.connection === 'close'), 10_000, 'the 515 close');
    logLines.length = 0; // the pairing socket's 515 ("stream errored out") is expected
    c = await connect(double, creds, store);
    await waitFor(() => c!.conn.some((u) => u.connection === 'open'), 10_000, 'open');
    await double.synced(device, 30_000);
    // Baileys counts the end of its initial sync (history + app state) in creds.
    await waitFor(() => (creds.accountSyncCounter ?? 0) > 0, 30_000, 'the end of the initial app-state sync');
    const history = () => c!.events['messaging-history.set'] ?? [];
    await waitFor(() => history().reduce((n, h) => n + h.messages.length, 0) >= REALISTIC_ACCOUNT.messages, 30_000, 'all history messages');
    const world = double.worldNow(device.account)!;
    const groupTexts = () => (c!.events['messages.upsert'] ?? []).flatMap((u) => u.messages).filter((m) => m.key.remoteJid?.endsWith('@g.us') && m.message?.conversation?.startsWith('hi from'));
    await waitFor(() => groupTexts().length >= REALISTIC_ACCOUNT.groups * REALISTIC_ACCOUNT.groupSenders, 20_000, 'the group members’ messages');

    // History: 200 chats, 2,000 messages, push names.
    const chats = new Set(history().flatMap((h) => h.chats.map((x) => x.id)));
    t.is(chats.size, REALISTIC_ACCOUNT.chats);
    t.is(history().reduce((n, h) => n + h.messages.length, 0), REALISTIC_ACCOUNT.messages);
    const book = addressBook(REALISTIC_ACCOUNT.contacts);
    const pushNames = new Set(history().flatMap((h) => h.contacts.filter((x) => x.notify).map((x) => x.id)));
    t.is(pushNames.size, book.length + 1, 'the address book and one person outside it');
    t.true(pushNames.has(PUSH_NAME_ONLY.jid));

    // App-state contacts: every address-book entry, with its LID; one renamed by a later patch.
    const contacts = new Map<string, { name?: string | undefined; lid?: string | undefined }>();
    for (const batch of c.events['contacts.upsert'] ?? []) for (const x of batch) if (x.id.endsWith('@s.whatsapp.net') && x.lid) contacts.set(x.id, { name: x.name, lid: x.lid });
    t.is(contacts.size, book.length);
    t.is(contacts.get(book[0]!.jid)?.name, `${book[0]!.name} (work)`);
    t.is(contacts.get(book[299]!.jid)?.lid, book[299]!.lid);

    // LID mappings stored for the whole address book (history + contacts).
    const lidMapping = c.sock.signalRepository.lidMapping;
    const mappings = await store.get('lid-mapping', book.map((b) => b.phone));
    t.is(Object.keys(mappings).length, book.length);
    // Every one, both ways, through the gateway's bounded cache (the rest from the key store).
    t.true(book.length > LID_BOUND, 'the account has more mappings than the cache holds');
    for (const b of book) {
      t.is(await lidMapping.getLIDForPN(b.jid), b.lid, b.jid);
      // Baileys answers with the device (`:0`) of the LID asked for.
      t.is(jidNormalizedUser((await lidMapping.getPNForLID(b.lid)) ?? ''), b.jid, b.lid);
    }
    const cache = (lidMapping as unknown as { mappingCache: unknown }).mappingCache;
    t.true(cache instanceof BoundedMap, 'the gateway’s cache is in place');
    t.true((cache as BoundedMap<string, string>).size <= LID_BOUND, `cache holds ${(cache as BoundedMap<string, string>).size}`);
    t.true(purgeTimers < 20, `${purgeTimers} lru-cache purge timers armed`);

    // App state: each collection at the double's final version with the same LT hash (every MAC
    // Baileys checked matched, or it would have skipped records and diverged), chat settings applied.
    const versions = await store.get('app-state-sync-version', [...COLLECTIONS]);
    for (const name of COLLECTIONS) {
      const state = versions[name] as LTHashState | undefined;
      t.is(state?.version, world.collections[name].version, name);
      t.true(Buffer.from(state?.hash ?? []).equals(world.collections[name].hash), `${name} LT hash`);
      t.is(Object.keys(state?.indexValueMap ?? {}).length, world.collections[name].live.size, `${name} records`);
    }
    // Chat settings reach the app as chat updates; Baileys' event buffer folds them into the
    // history's chats when both are buffered, and holds back ("conditional") those of chats it does
    // not know yet, as with WhatsApp itself (the RECENT history is still downloading): some, not all.
    const updates = [...(c.events['chats.update'] ?? []).flat(), ...history().flatMap((h) => h.chats)];
    t.true(updates.some((u) => u.archived));
    t.true(updates.some((u) => u.muteEndTime));
    t.true(updates.some((u) => u.pinned));
    t.is(new Set((c.events['labels.edit'] ?? []).map((l) => l.id)).size, 3);
    t.true((c.events['labels.association'] ?? []).length >= 16);
    t.truthy(creds.myAppStateKeyId);

    // Groups: each member's sender key stored, their messages decrypted.
    t.is(groupTexts().length, REALISTIC_ACCOUNT.groups * REALISTIC_ACCOUNT.groupSenders);
    for (const group of world.groups) {
      for (const member of group.contacts().slice(0, REALISTIC_ACCOUNT.groupSenders)) {
        const id = `${group.jid}::${member.lidUser}_1::0`; // LID addresses are `USER_1` in Signal names
        t.truthy((await store.get('sender-key', [id]))[id], `sender key ${id}`);
      }
    }

    // Nothing failed on either side.
    t.deepEqual(double.errors, []);
    const failures = logLines.filter((l) => l.level >= 40 || /LTHash verification failed|failed to decode|failed to sync|blocked on missing key|failed to decrypt/i.test(l.msg));
    t.deepEqual(failures.map((l) => l.msg.slice(0, 300)), []);

    // A later login: nothing is synced again (no snapshot asked for), nothing left in the offline queue.
    const appStateQueries = () => double.sessions.flatMap((s) => s.received).filter((n) => n.attrs.xmlns === 'w:sync:app:state').length;
    const before = appStateQueries();
    await close(c);
    c = await connect(double, creds, store);
    await waitFor(() => c!.conn.some((u) => u.connection === 'open'), 10_000, 'open again');
    await new Promise((r) => setTimeout(r, 500));
    t.is(appStateQueries(), before);
    t.deepEqual(double.pending(device), []);
    t.deepEqual(double.errors, []);
  } finally {
    if (c) await close(c);
    await double.close();
  }
});

test('accountData is off by default: no app-state key, no chats', async (t) => {
  const double = await ProtocolDouble.start();
  try {
    t.is(double.accountData, null);
    t.is(double.dataOf(double.account()), null);
  } finally {
    await double.close();
  }
});
