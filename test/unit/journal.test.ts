import test from 'ava';
import { constants } from 'node:fs';
import { appendFile, readdir, readFile, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Journal } from '../../src/storage/files/journal.js';
import { tempDir } from '../helpers/daemon.js';
import { UNGUARDED } from '../../src/fs/write-guard.js';

// Rule: a journal line acknowledged as durable is on disk, in order, and survives a reopen; a
// torn tail left by a crash is cut off; group commit writes many lines per write.

test('lines come back in order after a reopen, with their offsets', async (t) => {
  const file = join(await tempDir(), 'j.jsonl');
  const { journal } = await Journal.open(file, { guard: UNGUARDED });
  const offsets: number[] = [];
  const writes = Array.from({ length: 100 }, (_, i) => {
    const { offset, durable } = journal.append(JSON.stringify({ i }));
    offsets.push(offset);
    return durable;
  });
  await Promise.all(writes);
  await journal.close();
  const { journal: again, lines } = await Journal.open(file, { guard: UNGUARDED });
  t.deepEqual(lines.map((l) => JSON.parse(l.text).i), Array.from({ length: 100 }, (_, i) => i));
  t.deepEqual(lines.map((l) => l.offset), offsets);
  t.is(await again.read(offsets[42]!, lines[42]!.text.length), '{"i":42}');
  await again.close();
});

test('a torn last line (a crash mid-write) is cut off at open', async (t) => {
  const file = join(await tempDir(), 'j.jsonl');
  const { journal } = await Journal.open(file, { guard: UNGUARDED });
  await journal.append('{"a":1}').durable;
  await journal.close();
  await appendFile(file, '{"b":');
  const { journal: again, lines } = await Journal.open(file, { guard: UNGUARDED });
  t.deepEqual(lines.map((l) => l.text), ['{"a":1}']);
  t.is((await stat(file)).size, 8);
  await again.append('{"c":3}').durable;
  await again.close();
  t.is(await readFile(file, 'utf8'), '{"a":1}\n{"c":3}\n');
});

test('lazy lines keep their place among durable ones', async (t) => {
  const file = join(await tempDir(), 'j.jsonl');
  const { journal } = await Journal.open(file, { guard: UNGUARDED });
  journal.appendLazy('1');
  const d = journal.append('2');
  journal.appendLazy('3');
  await d.durable;
  await journal.drain();
  await journal.close();
  t.is(await readFile(file, 'utf8'), '1\n2\n3\n');
});

test('rewrite (compaction) replaces the content atomically and appends go after it', async (t) => {
  const file = join(await tempDir(), 'j.jsonl');
  const { journal } = await Journal.open(file, { guard: UNGUARDED });
  for (let i = 0; i < 10; i++) journal.appendLazy(`old${i}`);
  const offsets = await journal.rewrite(['keep-a', 'keep-b']);
  t.deepEqual(offsets, [0, 7]);
  await journal.append('new').durable;
  t.is(await journal.read(offsets[1]!, 6), 'keep-b');
  await journal.close();
  t.is(await readFile(file, 'utf8'), 'keep-a\nkeep-b\nnew\n');
});

/** The open flags of this process's descriptors on `file`, from /proc (Linux). */
async function openFlags(file: string): Promise<number[]> {
  const flags: number[] = [];
  for (const fd of await readdir('/proc/self/fd')) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
    if (target !== file) continue;
    const info = await readFile(`/proc/self/fdinfo/${fd}`, 'utf8').catch(() => '');
    const m = /^flags:\s+([0-7]+)$/m.exec(info);
    if (m) flags.push(parseInt(m[1]!, 8));
  }
  return flags;
}

test('a dsync journal writes through O_DSYNC, also after a rewrite; a plain one does not', async (t) => {
  // Rule: the credit journal's lines are on disk when its write returns (one trip to the disk, no
  // separate fdatasync); a compaction must not reopen it without the flag (its debits would then be
  // acknowledged before they are on disk).
  const dir = await tempDir();
  const file = join(dir, 'd.jsonl');
  const { journal } = await Journal.open(file, { guard: UNGUARDED, eager: true, dsync: true });
  const dsync = (flags: number[]): boolean => flags.length > 0 && flags.every((f) => (f & constants.O_DSYNC) === constants.O_DSYNC);
  t.true(dsync(await openFlags(file)), 'opened with O_DSYNC');
  await Promise.all([journal.append('{"a":1}').durable, journal.append('{"b":2}').durable]);
  journal.appendLazy('{"c":3}');
  await journal.drain();
  await journal.rewrite(['{"snapshot":1}']);
  t.true(dsync(await openFlags(file)), 'reopened with O_DSYNC after the rewrite');
  await journal.append('{"d":4}').durable;
  await journal.close();
  t.is(await readFile(file, 'utf8'), '{"snapshot":1}\n{"d":4}\n');

  const plainFile = join(dir, 'p.jsonl');
  const { journal: plain } = await Journal.open(plainFile, { guard: UNGUARDED });
  const plainFlags = await openFlags(plainFile);
  t.is(plainFlags.length, 1);
  t.false(dsync(plainFlags), 'a plain journal syncs with fdatasync instead');
  await plain.close();
});

test('an adaptive journal writes through O_DSYNC while most writes are waited for, and plainly again while few are', async (t) => {
  // Rule (issue "Performance, round 2": premium sends at least as fast as debited ones): the message
  // journal's waited-for writes (a premium send's `sent`, a received message) take one trip to the
  // disk; a debited send's lazy lines are not made to wait for the disk; switching either way keeps
  // every line, in order, on one descriptor.
  const file = join(await tempDir(), 'a.jsonl');
  const { journal } = await Journal.open(file, { guard: UNGUARDED, adaptive: true });
  const dsync = async (): Promise<boolean> => {
    const flags = await openFlags(file);
    t.is(flags.length, 1, 'one descriptor: the one before a switch is closed');
    return (flags[0]! & constants.O_DSYNC) === constants.O_DSYNC;
  };
  t.false(await dsync(), 'plain at first');
  t.false(journal.dsync);
  const expected: string[] = [];
  for (let i = 0; i < 20; i++) {
    journal.appendLazy(`{"lazy":${i}}`); // a pending line goes out with the waited-for one after it
    await journal.append(`{"waited":${i}}`).durable;
    expected.push(`{"lazy":${i}}`, `{"waited":${i}}`);
  }
  t.true(journal.dsync, 'O_DSYNC once most writes are waited for');
  t.true(await dsync());
  for (let i = 0; i < 20; i++) {
    journal.appendLazy(`{"only-lazy":${i}}`);
    await journal.drain();
    expected.push(`{"only-lazy":${i}}`);
  }
  t.false(journal.dsync, 'plain again once few are');
  t.false(await dsync());
  await journal.close();
  t.is(await readFile(file, 'utf8'), expected.map((l) => `${l}\n`).join(''));
});

test('a lazy-only journal never switches to O_DSYNC', async (t) => {
  const file = join(await tempDir(), 'l.jsonl');
  const { journal } = await Journal.open(file, { guard: UNGUARDED, adaptive: true });
  for (let i = 0; i < 30; i++) {
    journal.appendLazy(`{"n":${i}}`);
    await journal.drain();
  }
  t.false(journal.dsync);
  t.is(journal.writes, 30);
  await journal.close();
});
