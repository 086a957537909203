import test from 'ava';
import { GatewayError } from '../../src/domain/errors.js';
import { RateWindow, SendQueue } from '../../src/connection/send-queue.js';

test('sends leave one at a time, at least minIntervalMs apart', async (t) => {
  const q = new SendQueue({ minIntervalMs: 30, jitterMs: 0, maxWaitMs: 10_000 });
  const starts: number[] = [];
  await Promise.all([1, 2, 3].map(() => q.run(async () => void starts.push(Date.now()))));
  t.is(starts.length, 3);
  t.true(starts[1]! - starts[0]! >= 25);
  t.true(starts[2]! - starts[1]! >= 25);
});

test('a send whose turn is further than maxWaitMs is refused with Retry-After', async (t) => {
  const q = new SendQueue({ minIntervalMs: 1000, jitterMs: 0, maxWaitMs: 1500 });
  const first = q.run(async () => 'a');
  const second = q.run(async () => 'b');
  const err = await t.throwsAsync(q.run(async () => 'c'), { instanceOf: GatewayError });
  t.is(err.code, 'RATE_LIMITED');
  t.true((err.retryAfter ?? 0) >= 1);
  t.is(await first, 'a');
  t.is(await second, 'b');
});

test('a failed send does not block the queue', async (t) => {
  const q = new SendQueue({ minIntervalMs: 1, jitterMs: 0, maxWaitMs: 1000 });
  await t.throwsAsync(q.run(async () => Promise.reject(new Error('boom'))));
  t.is(await q.run(async () => 'ok'), 'ok');
});

test('sendsPerMinute window refuses past the limit and frees up after a minute', (t) => {
  let now = 0;
  const w = new RateWindow(2, () => now);
  w.take();
  w.take();
  const err = t.throws(() => w.take(), { instanceOf: GatewayError });
  t.is(err.code, 'RATE_LIMITED');
  t.is(err.retryAfter, 60);
  now = 60_001;
  t.notThrows(() => w.take());
  t.notThrows(() => new RateWindow(0).take());
});
