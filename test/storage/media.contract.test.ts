/**
 * The media port's contract (issue 22; issue 23: the same on PostgreSQL): bytes come back as
 * stored, as a stream, after a reopen too; each instance keeps at most `media.maxStoreBytes`
 * (oldest first) and `media.keepDays`; a file larger than the bound alone is refused; and what
 * was acknowledged survives kill -9.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer, text } from 'node:stream/consumers';
import { crashRun } from './crash.js';
import { engineTest, testConfig } from './engines.js';

const ID = 'inst_media00001';
const DAY = 86_400_000;

engineTest('media: bytes and files come back as stored, as streams, after a reopen too', async (t, at) => {
  const s = await at.open();
  const now = Date.now();
  // Larger than one read of a chunked engine, and not a multiple of it.
  const big = Buffer.alloc(700_001);
  for (let i = 0; i < big.length; i++) big[i] = (i * 31) % 251;
  t.true(await s.media.put(ID, 'BIG', { bytes: big }, now));
  const dir = await mkdtemp(join(tmpdir(), 'gw-media-src-'));
  try {
    await writeFile(join(dir, 'f.txt'), 'from a file');
    t.true(await s.media.put(ID, 'FILE', { path: join(dir, 'f.txt') }, now + 1));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  await s.close();
  const again = await at.open();
  const got = await again.media.get(ID, 'BIG');
  t.is(got?.size, big.length);
  t.true((await buffer(got!.stream())).equals(big));
  t.true((await buffer(got!.stream())).equals(big), 'each call gives a new stream');
  t.is(await text((await again.media.get(ID, 'FILE'))!.stream()), 'from a file');
  t.is(await again.media.get(ID, 'NONE'), null);
  t.is(await again.media.get(ID, '../etc'), null);
  await again.media.remove(ID, 'FILE');
  t.is(await again.media.get(ID, 'FILE'), null);
  await again.media.removeInstance(ID);
  t.is(await again.media.get(ID, 'BIG'), null);
});

engineTest('media: an instance keeps at most media.maxStoreBytes, the oldest go first; one file over the bound is refused', async (t, at) => {
  const config = testConfig({ media: { maxStoreBytes: 10 } });
  const s = await at.open({ config });
  const now = Date.now();
  for (let i = 1; i <= 3; i++) t.true(await s.media.put(ID, `M${i}`, { bytes: new Uint8Array(4).fill(i) }, now + i));
  t.is(await s.media.get(ID, 'M1'), null, 'the oldest went');
  t.truthy(await s.media.get(ID, 'M2'));
  t.truthy(await s.media.get(ID, 'M3'));
  t.truthy(await s.media.put('inst_media00002', 'OTHER', { bytes: new Uint8Array(10) }, now), 'bounds are per instance');
  t.truthy(await s.media.get(ID, 'M2'));
  t.false(await s.media.put(ID, 'HUGE', { bytes: new Uint8Array(11) }, now + 4));
  t.truthy(await s.media.get(ID, 'M3'), 'a refused file evicts nothing');
  await s.close();
  const again = await at.open({ config });
  t.is(await again.media.get(ID, 'M1'), null);
  t.is((await again.media.get(ID, 'M3'))?.size, 4);
});

engineTest('media: older than media.keepDays is not served, and the sweep removes it', async (t, at) => {
  const config = testConfig({ media: { keepDays: 2 } });
  const s = await at.open({ config });
  const now = Date.now();
  await s.media.put(ID, 'OLD', { bytes: new Uint8Array([1]) }, now - 3 * DAY);
  await s.media.put(ID, 'NEW', { bytes: new Uint8Array([2]) }, now);
  t.is(await s.media.get(ID, 'OLD', now), null);
  t.truthy(await s.media.get(ID, 'NEW', now));
  await s.media.sweep(now);
  t.is(await s.media.get(ID, 'OLD'), null);
  t.truthy(await s.media.get(ID, 'NEW'));
  t.is(await s.media.get(ID, 'NEW', now + 3 * DAY), null);
});

engineTest('media: after kill -9 every acknowledged file is there, whole', async (t, at) => {
  const run = await crashRun<{ id: string; size: number }>(at, 'media', { id: ID, count: 2_000 }, (acks) => acks.length >= 15);
  t.true(run.acks.length >= 15, run.stderr);
  const s = await at.open();
  for (const a of run.acks) {
    const m = await s.media.get(ID, a.id);
    t.is(m?.size, a.size, `${a.id} was acknowledged`);
    const bytes = await buffer(m!.stream());
    t.is(bytes.length, a.size);
  }
});
