import test from 'ava';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileAuthStates } from '../../src/storage/files/auth-state.js';
import { UNGUARDED } from '../../src/fs/write-guard.js';
import type { AuthSnapshot } from '../../src/storage/ports/auth-state.js';

// Issue 26 item 3 (sessions on threads of their own): a session thread hands its key tables to the
// files engine as UTF-8 bytes, which it joins as bytes. The rule: the file is byte for byte the one
// the tables' text makes (non-ASCII included), and reads back the same; one table without bytes
// makes the whole file from text.

const encoder = new TextEncoder();
const tables = [
  { type: 'pre-key', changed: true, json: '{"~packed":"QUJD"}' },
  { type: 'session', changed: false, json: '{"15550001111.0":{"name":"Zoë 🌍","n":1}}' },
  { type: '__proto__', changed: true, json: '{"a":[1,2,3]}' },
];
const creds = '{"me":{"id":"15550001111:1@s.whatsapp.net","name":"Ünïcode"}}';

function snapshot(asBytes: (i: number) => boolean): AuthSnapshot {
  return {
    creds,
    paired: true,
    tables: tables.map((t, i) => ({ type: t.type, changed: t.changed, json: () => t.json, ...(asBytes(i) ? { bytes: () => encoder.encode(t.json) } : {}) })),
  };
}

test('tables given as bytes make the same file as their text, and read back the same', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'gw-auth-bytes-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const store = new FileAuthStates(dir, UNGUARDED);
  await store.write('inst_text', snapshot(() => false));
  await store.write('inst_bytes', snapshot(() => true));
  await store.write('inst_mixed', snapshot((i) => i !== 1));
  const text = await readFile(store.file('inst_text'));
  t.deepEqual(await readFile(store.file('inst_bytes')), text);
  t.deepEqual(await readFile(store.file('inst_mixed')), text);
  const back = await store.read('inst_bytes');
  t.deepEqual(back, await store.read('inst_text'));
  t.deepEqual(Object.keys(back!.keys), ['pre-key', 'session', '__proto__']);
  t.deepEqual(back!.keys.session, { '15550001111.0': { name: 'Zoë 🌍', n: 1 } });
  t.true(await store.isPaired('inst_bytes'));
});
