import test from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { AuthStore } from '../../src/connection/baileys/auth-state.js';
import { compactViews } from '../../src/connection/baileys/compact-views.js';
import { FileAuthStates } from '../../src/storage/files/auth-state.js';
import { UNGUARDED } from '../../src/fs/write-guard.js';
import { silent } from './baileys-fake-socket.js';

// Issue 26 item 2 (RSS per session): what a session keeps must not keep the blob it was cut from.
// Baileys stores each app-state valueMac as `blob.subarray(-32)` of the downloaded snapshot; the
// key store copies such views out. The rule: same bytes, a small buffer of their own, small buffers
// left as they are. A slab of Node's Buffer pool is copied out of too: on Node 22 and later a slab
// is 64 KiB, and a few kept keys held whole slabs (external after pairing, see compact-views.ts);
// so is any view whose buffer holds 1 KiB or more besides it (sender keys held 8 KiB slabs on Node 20).

test('views into a large buffer or a pool slab are copied out, together, with the same bytes; small buffers stay', (t) => {
  const blob = randomBytes(100 * 1024);
  const value = {
    hash: Buffer.alloc(128),
    indexValueMap: Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`k${i}`, { valueMac: blob.subarray(i * 100, i * 100 + 32) }])),
    list: [new Uint8Array(blob.buffer, blob.byteOffset + 5, 33)],
    pooled: Buffer.from('small and pooled'),
  };
  const before = Object.values(value.indexValueMap).map((e) => Buffer.from(e.valueMac));
  const pooledBefore = Buffer.from(value.pooled);
  t.is(value.pooled.buffer.byteLength, Buffer.poolSize, 'a view into a slab of the Buffer pool');
  const out = compactViews(value);
  t.is(out, value, 'changed in place');
  const macs = Object.values(out.indexValueMap).map((e) => e.valueMac);
  t.deepEqual(macs.map((m) => Buffer.from(m)), before, 'the same bytes');
  t.true(macs.every((m) => m instanceof Buffer && m.buffer.byteLength === 300 * 32 + 33 + 16), 'one home for all copies of the call');
  t.is(out.list[0]!.byteLength, 33);
  t.false(out.list[0] instanceof Buffer, 'a Uint8Array stays a Uint8Array');
  t.is(out.list[0]!.buffer, macs[0]!.buffer);
  t.deepEqual(out.pooled, pooledBefore, 'the same bytes');
  t.is(out.pooled.buffer, macs[0]!.buffer, 'out of the pool slab, into the home of the call');
  t.is(out.hash.buffer.byteLength, out.hash.byteLength, 'a buffer of its own is left alone');
  const top = blob.subarray(0, 32);
  t.not(compactViews(top), top, 'a value that is itself a view is copied');
  t.deepEqual(compactViews(top), top);
  t.is(compactViews(top).buffer.byteLength, 32, 'into a buffer of its own, not a pool slab');
  // Baileys' sender keys: a value that is itself a small Buffer from the pool (their JSON).
  const senderKey = Buffer.from(JSON.stringify({ senderKeyStates: [{ senderKeyId: 1 }] }));
  t.is(senderKey.buffer.byteLength, Buffer.poolSize, 'a view into a slab of the Buffer pool');
  t.is(compactViews(senderKey).buffer.byteLength, senderKey.byteLength, 'copied out of the slab');
  const plain = new Uint8Array(blob.buffer, blob.byteOffset + 64, 32);
  const plainCopy = compactViews(plain);
  t.false(plainCopy instanceof Buffer, 'a Uint8Array stays a Uint8Array at the top too');
  t.deepEqual(Buffer.from(plainCopy), Buffer.from(plain));
  const shared = blob.subarray(100, 132);
  const twice = compactViews({ a: shared, b: [shared] });
  t.is(twice.a, twice.b[0]!, 'a view held twice is copied once');
  t.is(twice.a.buffer.byteLength, 32);
  // A large part of a pool slab (Baileys' sender keys: their JSON in a Buffer) is copied out too;
  // a view whose buffer holds less than 1 KiB besides it stays.
  const slab = Buffer.allocUnsafeSlow(8192);
  const big = slab.subarray(0, 3000);
  const bigCopy = compactViews({ k: big }).k;
  t.is(bigCopy.buffer.byteLength, 3000, 'copied out of an 8 KiB slab');
  t.deepEqual(bigCopy, big);
  const snug = Buffer.allocUnsafeSlow(1200).subarray(0, 400);
  t.is(compactViews({ k: snug }).k, snug, '800 bytes besides it: left alone');
});

test("the key store keeps app-state versions without the snapshot they were decoded from", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'gw-compact-'));
  try {
    const store = await AuthStore.open(new FileAuthStates(join(dir, 'auth'), UNGUARDED), 'inst_compact0001', { logger: silent, debounceMs: 5 });
    const snapshot = randomBytes(200 * 1024);
    const indexValueMap = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`i${i}`, { valueMac: snapshot.subarray(i * 600 + 568, i * 600 + 600) }]));
    await store.state.keys.set({ 'app-state-sync-version': { critical_block: { version: 3, hash: Buffer.alloc(128), indexValueMap } } });
    const got = (await store.state.keys.get('app-state-sync-version', ['critical_block'])).critical_block!;
    const macs = Object.values(got.indexValueMap).map((e) => e.valueMac as Uint8Array);
    t.is(macs.length, 300);
    t.true(macs.every((m, i) => Buffer.from(m).equals(snapshot.subarray(i * 600 + 568, i * 600 + 600))));
    // The store keeps these states as text (COLD in auth-state.ts); a read makes small new Buffers,
    // from Node's pool (a slab of Buffer.poolSize: 8 KiB on Node 20, 64 KiB on Node 24), never views
    // into the snapshot they were decoded from.
    t.true(macs.every((m) => m.buffer !== snapshot.buffer && m.buffer.byteLength <= Math.max(300 * 32, Buffer.poolSize)), 'no 200 KB snapshot behind them');
    await store.flush();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
