/**
 * Logins and memory (issue 26 item 2): a session's one-time pre-keys are stored packed, 68 bytes
 * each under one base64 member (`~packed`, src/connection/baileys/auth-state.ts PACKED_ROWS), not
 * as a JSON object each. Guards: every pair comes back byte for byte, entries of another shape
 * beside them; a file of earlier versions (a JSON object each) still loads and is rewritten packed
 * at its next save; a damaged packed member is STORE_CORRUPT and the file is left as it was (never
 * a new pairing over it); a used pre-key (Baileys sets it to null) is gone from the next save.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BufferJSON } from '@whiskeysockets/baileys';
import { AuthStateCorruptError, AuthStore, PACKED_ROWS } from '../../src/connection/baileys/auth-state.js';
import { FileAuthStates } from '../../src/storage/files/auth-state.js';
import { UNGUARDED } from '../../src/fs/write-guard.js';
import { silent } from './baileys-fake-socket.js';

const ID = 'inst-1';
type Pair = { private: Buffer; public: Buffer };

async function place(): Promise<{ dir: string; repo: FileAuthStates; file: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-prekeys-'));
  const repo = new FileAuthStates(join(dir, 'auth'), UNGUARDED);
  return { dir, repo, file: repo.file(ID) };
}

/** What Baileys makes at pairing: 812 pairs of 32-byte keys under ids 1 to 812. */
function preKeys(count = 812, from = 1): Record<string, Pair> {
  const out: Record<string, Pair> = {};
  for (let id = from; id < from + count; id++) out[String(id)] = { private: randomBytes(32), public: randomBytes(32) };
  return out;
}

type StoredFile = { keys: Record<string, Record<string, unknown>> };

test('812 pre-keys are stored as one packed member and come back byte for byte, with an entry of another shape beside them', async (t) => {
  const { dir, repo, file } = await place();
  const store = await AuthStore.open(repo, ID, { logger: silent, debounceMs: 5 });
  const pairs = preKeys();
  const odd = { public: Buffer.from([1, 1]), private: Buffer.from([2, 2]) };
  await store.state.keys.set({ 'pre-key': { ...pairs, '9999': odd } });
  await store.flush();

  const stored = (JSON.parse(await readFile(file, 'utf8')) as StoredFile).keys['pre-key']!;
  t.deepEqual(Object.keys(stored).sort(), ['9999', PACKED_ROWS]);
  const rows = Buffer.from(stored[PACKED_ROWS] as string, 'base64');
  t.is(rows.length, 812 * 68);
  t.is(rows.readUInt32BE(0), 1, 'the first row is pre-key 1');
  t.deepEqual(rows.subarray(4, 36), pairs['1']!.private);
  t.deepEqual(rows.subarray(36, 68), pairs['1']!.public);
  t.deepEqual(stored['9999'], JSON.parse(JSON.stringify(odd, BufferJSON.replacer)));

  const again = await AuthStore.open(repo, ID, { logger: silent });
  const ids = [...Object.keys(pairs), '9999', '813'];
  const got = await again.state.keys.get('pre-key', ids);
  t.deepEqual(Object.keys(got).sort(), [...Object.keys(pairs), '9999'].sort());
  for (const [id, pair] of Object.entries(pairs)) {
    t.true(Buffer.isBuffer(got[id]?.private), `pre-key ${id} has Buffers`);
    if (!Buffer.from(got[id]!.private).equals(pair.private) || !Buffer.from(got[id]!.public).equals(pair.public)) t.fail(`pre-key ${id} differs`);
  }
  t.deepEqual(Buffer.from(got['9999']!.public), odd.public);
  await rm(dir, { recursive: true, force: true });
});

test('a file of an earlier version (each pre-key a JSON object) loads and is written packed at its next save', async (t) => {
  const { dir, repo, file } = await place();
  const first = await AuthStore.open(repo, ID, { logger: silent, debounceMs: 5 });
  first.saveCreds();
  await first.flush();
  const pairs = preKeys(30);
  const doc = JSON.parse(await readFile(file, 'utf8')) as StoredFile;
  doc.keys['pre-key'] = JSON.parse(JSON.stringify(pairs, BufferJSON.replacer)) as Record<string, unknown>;
  await writeFile(file, JSON.stringify(doc));

  const store = await AuthStore.open(repo, ID, { logger: silent, debounceMs: 5 });
  const got = await store.state.keys.get('pre-key', ['1', '30']);
  t.deepEqual(got['30']?.public, pairs['30']!.public);
  // Baileys deletes a pre-key once a contact used it: the save that follows writes the rest packed.
  await store.state.keys.set({ 'pre-key': { '1': null } });
  await store.flush();
  const stored = (JSON.parse(await readFile(file, 'utf8')) as StoredFile).keys['pre-key']!;
  t.deepEqual(Object.keys(stored), [PACKED_ROWS]);
  const rows = Buffer.from(stored[PACKED_ROWS] as string, 'base64');
  t.is(rows.length, 29 * 68);
  t.deepEqual([...Array(29).keys()].map((i) => rows.readUInt32BE(i * 68)), [...Array(29).keys()].map((i) => i + 2));

  const again = await AuthStore.open(repo, ID, { logger: silent });
  t.deepEqual(Object.keys(await again.state.keys.get('pre-key', ['1', '2', '30'])), ['2', '30']);
  await rm(dir, { recursive: true, force: true });
});

test('a damaged packed member is refused as STORE_CORRUPT and the file is left as it was', async (t) => {
  const { dir, repo, file } = await place();
  const store = await AuthStore.open(repo, ID, { logger: silent, debounceMs: 5 });
  await store.state.keys.set({ 'pre-key': preKeys(3) });
  await store.flush();
  const good = JSON.parse(await readFile(file, 'utf8')) as StoredFile;
  const packed = good.keys['pre-key']![PACKED_ROWS] as string;
  const tooBig = Buffer.from(packed, 'base64');
  tooBig.writeUInt32BE(1_000_000_000, 68);
  const damaged: Array<[string, unknown, RegExp]> = [
    ['not base64', `${packed.slice(0, 10)}!${packed.slice(11)}`, /not base64/],
    ['not a string', 42, /not base64/],
    ['a row short', Buffer.from(packed, 'base64').subarray(0, 3 * 68 - 1).toString('base64'), /malformed.*not a multiple of 68/],
    ['an id no table gives', tooBig.toString('base64'), /malformed.*id 1000000000/],
  ];
  for (const [what, value, message] of damaged) {
    const doc = structuredClone(good);
    doc.keys['pre-key']![PACKED_ROWS] = value;
    const text = JSON.stringify(doc);
    await writeFile(file, text);
    const err = await t.throwsAsync(AuthStore.open(repo, ID, { logger: silent }), { instanceOf: AuthStateCorruptError }, what);
    t.is(err?.code, 'STORE_CORRUPT', what);
    t.regex(err?.message ?? '', message, what);
    t.is(await readFile(file, 'utf8'), text, `${what}: the file is untouched`);
  }
  await rm(dir, { recursive: true, force: true });
});
