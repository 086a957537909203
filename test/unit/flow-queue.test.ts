import test from 'ava';
import { CoalescingWriter } from '../../src/flows/coalescing-writer.js';
import { KeyedQueue } from '../../src/flows/keyed-queue.js';

const tick = () => new Promise((r) => setTimeout(r, 5));

test('a keyed queue runs one key in order and other keys alongside', async (t) => {
  const log: string[] = [];
  const q = new KeyedQueue(10, () => undefined);
  const task = (name: string, ms: number) => async () => {
    log.push(`start ${name}`);
    await new Promise((r) => setTimeout(r, ms));
    log.push(`end ${name}`);
  };
  q.push('a', task('a1', 30));
  q.push('a', task('a2', 1));
  q.push('b', task('b1', 1));
  await q.idle();
  t.true(log.indexOf('end a1') < log.indexOf('start a2'));
  t.true(log.indexOf('end b1') < log.indexOf('end a1'), 'b is not held up by a');
  t.is(q.size, 0);
});

test('a keyed queue refuses past its per-key limit and survives a failing task', async (t) => {
  const errors: unknown[] = [];
  const q = new KeyedQueue(2, (err) => errors.push(err));
  t.true(q.push('a', async () => { throw new Error('boom'); }));
  t.true(q.push('a', async () => undefined));
  t.false(q.push('a', async () => undefined));
  await q.idle();
  t.is(errors.length, 1);
  t.true(q.push('a', async () => undefined));
  await q.idle();
});

test('a coalescing writer merges requests made during a write into one next write', async (t) => {
  let writes = 0;
  let value = 0;
  const seen: number[] = [];
  let release: () => void = () => undefined;
  const w = new CoalescingWriter(async () => {
    writes++;
    const snapshot = value;
    await new Promise<void>((r) => (release = r));
    seen.push(snapshot);
  });
  value = 1;
  const first = w.request();
  await tick();
  value = 2;
  const second = w.request();
  value = 3;
  const third = w.request();
  t.is(second, third);
  release();
  await first;
  await tick();
  release();
  await Promise.all([second, third]);
  t.is(writes, 2);
  t.deepEqual(seen, [1, 3], 'the second write carries every change requested before it started');
  await w.flush();
});
