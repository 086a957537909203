import test from 'ava';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { BufferJSON, type SignalDataTypeMap } from '@whiskeysockets/baileys';
import { AuthStore, PACKED_ROWS, tableToJson, type AuthStoreOptions } from '../../src/connection/baileys/auth-state.js';
import { FileAuthStates } from '../../src/storage/files/auth-state.js';
import { silent } from './baileys-fake-socket.js';
import { UNGUARDED } from '../../src/fs/write-guard.js';

const authDirs = new WeakMap<AuthStore, string>();

/** The files engine's store of the instance whose credentials file is `file` (DIR/<id>.json). */
async function openStore(file: string, options: AuthStoreOptions): Promise<AuthStore> {
  const store = await AuthStore.open(new FileAuthStates(dirname(file), UNGUARDED), basename(file, '.json'), options);
  authDirs.set(store, dirname(file));
  return store;
}

function fileOf(store: AuthStore): string {
  return join(authDirs.get(store)!, `${store.instanceId}.json`);
}


// The credentials file is written from cached JSON of the key tables that did not change, and not
// at all when nothing changed (Baileys "updates" creds and its own device list with the same
// values at every login): a thousand sessions logging in spent most of their CPU re-serialising.

async function tempStore(): Promise<{ dir: string; store: AuthStore }> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-auth-inc-'));
  return { dir, store: await openStore(join(dir, 'auth', 'inst-1.json'), { logger: silent, debounceMs: 5 }) };
}

/** What the whole-document JSON.stringify (the format before the cache) writes for this state. */
async function expectedText(store: AuthStore, ids: Partial<Record<keyof SignalDataTypeMap, string[]>>): Promise<string> {
  const keys: Record<string, Record<string, unknown>> = {};
  for (const [type, list] of Object.entries(ids) as [keyof SignalDataTypeMap, string[]][]) {
    const got = await store.state.keys.get(type, list);
    if (Object.keys(got).length > 0) keys[type] = got;
  }
  return JSON.stringify({ format: 1, paired: store.state.creds.account != null, creds: store.state.creds, keys }, BufferJSON.replacer);
}

test('the file is the same text as a whole-document JSON.stringify, through changes to one table at a time', async (t) => {
  const { dir, store } = await tempStore();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const { keys, creds } = store.state;
  const ids: Partial<Record<keyof SignalDataTypeMap, string[]>> = { session: ['a.0', 'b.0'], 'lid-mapping': ['111', '222_reverse'], 'app-state-sync-version': ['regular'] };
  await keys.set({
    session: { 'a.0': Buffer.from('one'), 'b.0': Buffer.from('two') },
    'lid-mapping': { '111': '222', '222_reverse': '111' },
    'app-state-sync-version': { regular: { version: 3, hash: Buffer.alloc(128, 7), indexValueMap: { x: { valueMac: Buffer.from([1, 2]) } } } },
  });
  await store.flush();
  t.is(await readFile(fileOf(store), 'utf8'), await expectedText(store, { ...ids }));

  // One table changes: the others come from the cache, the text is still the whole document.
  await keys.set({ session: { 'a.0': Buffer.from('three'), 'b.0': null } });
  await store.flush();
  t.is(await readFile(fileOf(store), 'utf8'), await expectedText(store, { ...ids }));

  // Only the creds change.
  creds.me = { id: '15550001111:3@s.whatsapp.net', name: 'Me' };
  store.saveCreds();
  await store.flush();
  t.is(await readFile(fileOf(store), 'utf8'), await expectedText(store, { ...ids }));

  // What was written reads back.
  const again = await openStore(fileOf(store), { logger: silent });
  t.is(await readFile(fileOf(store), 'utf8'), await expectedText(again, { ...ids }));
});

test('writing what is already there saves nothing; a real change, or an object changed in place and written back, does', async (t) => {
  const { dir, store } = await tempStore();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const { keys, creds } = store.state;
  await keys.set({ 'device-list': { '15550001111': ['0', '3'] }, 'lid-mapping': { '111': '222' } });
  creds.me = { id: '15550001111:3@s.whatsapp.net', name: 'Me', lid: '100000000000001:3@lid' };
  store.saveCreds();
  await store.flush();
  const first = store.writes;
  t.true(first >= 1);

  // A login's worth of "updates": the same me, the same device list and mapping, as new objects.
  Object.assign(creds, { me: { id: '15550001111:3@s.whatsapp.net', name: 'Me', lid: '100000000000001:3@lid' } });
  store.saveCreds();
  await keys.set({ 'device-list': { '15550001111': ['0', '3'] }, 'lid-mapping': { '111': '222' } });
  await store.flush();
  t.is(store.writes, first);

  // A new value is written.
  await keys.set({ 'device-list': { '15550001111': ['0', '3', '4'] } });
  await store.flush();
  t.is(store.writes, first + 1);

  // An object changed in place and written back (as Baileys does with sender-key-memory) is written.
  const memory = { '120363000000000001@g.us': { '15550000002:0': true } as Record<string, boolean> };
  await keys.set({ 'sender-key-memory': memory });
  await store.flush();
  const got = (await keys.get('sender-key-memory', ['120363000000000001@g.us']))['120363000000000001@g.us']!;
  got['15550000003:0'] = true;
  await keys.set({ 'sender-key-memory': { '120363000000000001@g.us': got } });
  await store.flush();
  t.is(store.writes, first + 3);
  const text = await readFile(fileOf(store), 'utf8');
  t.true(text.includes('15550000003:0'));

  // Deleting what does not exist changes nothing; deleting what does is written.
  await keys.set({ session: { nothing: null } });
  await store.flush();
  t.is(store.writes, first + 3);
  await keys.set({ 'lid-mapping': { '111': null } });
  await store.flush();
  t.is(store.writes, first + 4);
  t.false((await readFile(fileOf(store), 'utf8')).includes('"111"'));
});

test('after remove() the fresh credentials are written at the next save', async (t) => {
  const { dir, store } = await tempStore();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await store.state.keys.set({ session: { 'a.0': Buffer.from('one') } });
  await store.flush();
  await store.remove();
  store.saveCreds();
  await store.flush();
  const again = await openStore(fileOf(store), { logger: silent });
  t.deepEqual(again.state.creds.noiseKey.public, store.state.creds.noiseKey.public);
  t.deepEqual(await again.state.keys.get('session', ['a.0']), {});
});

// A key table is written entry by entry (tableToJson), not through an object built of it: the same
// document, whatever its keys (phone numbers that an object would keep as integer-indexed elements
// and put first, "__proto__"), its values (Buffers, Uint8Arrays, nested objects) or their order.
test('a key table written entry by entry parses to what JSON.stringify of it as an object gives', (t) => {
  const table = new Map<string, unknown>([
    ['200000777000001_reverse', '1777000001'],
    ['1777000002', '200000777000002'],
    ['1777000001', '200000777000001'],
    ['__proto__', { polluted: true }],
    ['0', 'zero'],
    ['quote"and\\slash', 'x'],
    ['buf', Buffer.from('one')],
    ['u8', new Uint8Array([1, 2, 3])],
    ['nested', { hash: Buffer.alloc(4, 7), indexValueMap: { a: { valueMac: Buffer.from([9]) } }, version: 3 }],
  ]);
  const ours = JSON.parse(tableToJson(table)) as Record<string, unknown>;
  const viaObject = JSON.parse(JSON.stringify(Object.fromEntries(table), BufferJSON.replacer)) as Record<string, unknown>;
  t.deepEqual(ours, viaObject);
  t.deepEqual(Object.keys(ours).sort(), [...table.keys()].sort());
  t.is(Object.getPrototypeOf(ours), Object.prototype, 'an own "__proto__" entry, not a prototype');
  t.deepEqual(ours.__proto__, { polluted: true });
  t.is(tableToJson(new Map()), '{}');
  t.deepEqual(JSON.parse(tableToJson(new Map([['only', 1]]))), { only: 1 });
});

// The JSON of a key table is kept (for TABLE_CACHE_MS) as one flat string, not a rope: appended
// with +=, V8 keeps a cons string per entry, and in a heap snapshot of 200 accounts just paired
// those were 650,000 of the heap's 2.07 million objects, each marked at every full collection
// (README, "Performance": the pairing stall). Measured as heap: kept flat, 100 tables of 600 entries
// take about their length in bytes (ratio 1.01 here); kept as ropes, 5.4 times that.
test('the JSON of a key table is one flat string, not a rope of an object per entry', (t) => {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  const table = new Map<string, unknown>();
  for (let i = 0; i < 600; i++) table.set(String(15550000000 + i), `${100000000 + i}@lid`);
  gc();
  const before = process.memoryUsage().heapUsed;
  const kept = Array.from({ length: 100 }, () => tableToJson(table));
  gc();
  const grown = process.memoryUsage().heapUsed - before;
  const length = kept.reduce((n, json) => n + json.length, 0);
  t.true(grown < length * 2, `100 kept tables of ${length} characters in all grew the heap by ${grown} bytes`);
});

// The app-state collection states are kept as JSON text (COLD in auth-state.ts: thousands of small
// objects a session the collector would mark at every full collection): a read gives what was
// written, Buffers and all, a new object each time; writing the same state again saves nothing; a
// changed one is saved; and it survives a restart.
test('app-state collection states are kept as text: read back whole, compared by value, saved and reloaded', async (t) => {
  const { dir, store } = await tempStore();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const { keys } = store.state;
  const state = (version: number) => ({ version, hash: Buffer.alloc(128, version), indexValueMap: { 'aW5kZXgtMQ==': { valueMac: Buffer.from([1, 2, 3]) }, 'aW5kZXgtMg==': { valueMac: new Uint8Array([4, 5]) } } });
  await keys.set({ 'app-state-sync-version': { regular: state(3), critical_block: state(1) } });
  await store.flush();
  const writes = store.writes;

  const read = await keys.get('app-state-sync-version', ['regular', 'critical_block', 'missing']);
  t.deepEqual(Object.keys(read).sort(), ['critical_block', 'regular']);
  t.true(Buffer.isBuffer(read.regular!.hash) && read.regular!.hash.equals(Buffer.alloc(128, 3)));
  t.deepEqual(Buffer.from(read.regular!.indexValueMap['aW5kZXgtMg==']!.valueMac), Buffer.from([4, 5]));
  t.is(read.regular!.version, 3);
  const again = await keys.get('app-state-sync-version', ['regular']);
  t.not(again.regular, read.regular, 'a new object at each read');
  t.deepEqual(again.regular, read.regular);

  // Baileys writes back what it read, unchanged: nothing to save. Then a real change.
  await keys.set({ 'app-state-sync-version': { regular: read.regular! } });
  await store.flush();
  t.is(store.writes, writes);
  await keys.set({ 'app-state-sync-version': { regular: state(4), critical_block: null } });
  await store.flush();
  t.is(store.writes, writes + 1);

  const reopened = await openStore(fileOf(store), { logger: silent });
  const after = await reopened.state.keys.get('app-state-sync-version', ['regular', 'critical_block']);
  t.deepEqual(Object.keys(after), ['regular']);
  t.true(after.regular!.hash.equals(Buffer.alloc(128, 4)));
  t.deepEqual(JSON.parse(await readFile(fileOf(store), 'utf8')).keys['app-state-sync-version'], JSON.parse(JSON.stringify({ regular: state(4) }, BufferJSON.replacer)));
});

// Signal sessions and trusted-contact tokens are kept as JSON text too (COLD in auth-state.ts: in a
// snapshot of 200 accounts just paired they were ~290,000 of 1.57 million objects the collector
// marks at every full collection). A read gives libsignal's serialised record or the token with
// its Buffer, a new object each time, equal to what was written; the same write saves nothing;
// both survive a restart.
test('Signal sessions and tctokens are kept as text: equal on read, a new object each time, not re-saved unchanged, reloaded', async (t) => {
  const { dir, store } = await tempStore();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const { keys } = store.state;
  const record = (n: number) => ({
    _sessions: { [Buffer.alloc(33, n).toString('base64')]: { registrationId: n, currentRatchet: { rootKey: Buffer.alloc(32, n).toString('base64'), previousCounter: 0 }, _chains: { [Buffer.alloc(33, n + 1).toString('base64')]: { chainKey: { counter: n, key: Buffer.alloc(32, 9).toString('base64') }, chainType: 1, messageKeys: {} } } } },
    version: 'v1',
  }) as unknown as SignalDataTypeMap['session']; // libsignal's serialised record (Baileys types it as bytes)
  const token = (n: number) => ({ token: Buffer.alloc(40, n), timestamp: String(1_700_000_000 + n) });
  await keys.set({ session: { '111.0': record(1), '222.0': record(2) }, tctoken: { '111@s.whatsapp.net': token(1) } });
  await store.flush();
  const writes = store.writes;

  const s1 = await keys.get('session', ['111.0', '222.0', '333.0']);
  t.deepEqual(Object.keys(s1).sort(), ['111.0', '222.0']);
  t.deepEqual(s1['111.0'], record(1) as unknown as SignalDataTypeMap['session']);
  const s2 = await keys.get('session', ['111.0']);
  t.not(s2['111.0'], s1['111.0'], 'a new object at each read');
  const tk = await keys.get('tctoken', ['111@s.whatsapp.net']);
  t.true(Buffer.isBuffer(tk['111@s.whatsapp.net']!.token) && tk['111@s.whatsapp.net']!.token.equals(Buffer.alloc(40, 1)));
  t.is(tk['111@s.whatsapp.net']!.timestamp, String(1_700_000_001));

  await keys.set({ session: { '111.0': s1['111.0']! }, tctoken: { '111@s.whatsapp.net': tk['111@s.whatsapp.net']! } });
  await store.flush();
  t.is(store.writes, writes, 'the same values written back: nothing saved');
  await keys.set({ session: { '222.0': null, '111.0': record(5) as unknown as SignalDataTypeMap['session'] } });
  await store.flush();
  t.is(store.writes, writes + 1);

  const reopened = await openStore(fileOf(store), { logger: silent });
  const after = await reopened.state.keys.get('session', ['111.0', '222.0']);
  t.deepEqual(Object.keys(after), ['111.0']);
  t.deepEqual(after['111.0'], record(5) as unknown as SignalDataTypeMap['session']);
  const tk2 = await reopened.state.keys.get('tctoken', ['111@s.whatsapp.net']);
  t.true(tk2['111@s.whatsapp.net']!.token.equals(Buffer.alloc(40, 1)));

  // What the collector sees: one string an entry, not an object tree (a heap-size check of 2,000
  // tokens measured 0.65 MB as text, most of it the 30 s table JSON cache, too close to objects'
  // figure to tell them apart reliably; the representation itself is what this guards).
  const tables = (reopened as unknown as { keys: Map<string, Map<string, unknown>> }).keys;
  for (const type of ['session', 'tctoken']) {
    const values = [...(tables.get(type)?.values() ?? [])];
    t.true(values.length > 0 && values.every((v) => typeof v === 'string'), `${type} entries are kept as text`);
  }
  await reopened.flush();
});

// One-time pre-keys are kept packed (COLD in auth-state.ts, key-text.ts, packed-table.ts): a device
// that pairs makes 812 of them, and as objects (two Buffers each) they were ~0.2 MB of heap a
// session once paired (bench/sessions.ts, pairing as against WhatsApp). Guards: a read gives Baileys' KeyPair with
// Buffers, a new object each time; a used pre-key (set to null) is gone, in the file too; the file is
// the same document, its pre-key table as packed rows (PACKED_ROWS); all survive a restart.
test("one-time pre-keys are kept packed: read back as Baileys' key pairs, removed once used, the same file, reloaded", async (t) => {
  const { dir, store } = await tempStore();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const { keys } = store.state;
  const pair = (n: number) => ({ private: Buffer.alloc(32, n), public: Buffer.alloc(32, n + 100) });
  const preKeys: Record<string, ReturnType<typeof pair>> = {};
  for (let id = 1; id <= 812; id++) preKeys[String(id)] = pair(id % 100);
  await keys.set({ 'pre-key': preKeys });
  await store.flush();

  const got = await keys.get('pre-key', ['1', '812', '813']);
  t.deepEqual(Object.keys(got).sort(), ['1', '812']);
  t.true(Buffer.isBuffer(got['1']!.private) && got['1']!.private.equals(pair(1).private));
  t.true(Buffer.isBuffer(got['812']!.public) && got['812']!.public.equals(pair(12).public));
  const again = await keys.get('pre-key', ['1']);
  t.not(again['1'], got['1'], 'a new object at each read');

  // A contact's first message used pre-key 5: Baileys removes it.
  await keys.set({ 'pre-key': { '5': null } });
  await store.flush();
  const ids = Array.from({ length: 812 }, (_, i) => String(i + 1));
  // The file: the whole document, its pre-key table packed (PACKED_ROWS: id, private, public a row).
  const file = JSON.parse(await readFile(fileOf(store), 'utf8')) as { keys: Record<string, Record<string, string>> };
  const stored = file.keys['pre-key']!;
  t.deepEqual(Object.keys(stored), [PACKED_ROWS]);
  const rows = Buffer.from(stored[PACKED_ROWS]!, 'base64');
  const expected = ids.filter((id) => id !== '5').map((id) => Buffer.concat([Buffer.from([0, 0, Number(id) >> 8, Number(id) & 255]), pair(Number(id) % 100).private, pair(Number(id) % 100).public]));
  t.true(rows.equals(Buffer.concat(expected)), 'rows of every pre-key but 5, in order');
  delete file.keys['pre-key'];
  t.is(JSON.stringify(file), await expectedText(store, {}));

  const reopened = await openStore(fileOf(store), { logger: silent });
  const back = await reopened.state.keys.get('pre-key', ids);
  t.is(Object.keys(back).length, 811);
  t.true(Buffer.from(back['812']!.private).equals(pair(12).private));
  const tables = (reopened as unknown as { keys: Map<string, Iterable<[string, unknown]>> }).keys;
  const table = tables.get('pre-key')!;
  t.is(table.constructor.name, 'PackedTable', 'pre-keys are kept packed, 64 bytes each in one Buffer');
  const values = [...table].map(([, v]) => v);
  t.true(values.length === 811 && values.every((v) => typeof v === 'string' && v.length === 64), 'each pre-key is its 64 bytes');
  await reopened.flush();
});
