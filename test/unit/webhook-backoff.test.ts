import test from 'ava';
import { retryDelay } from '../../src/webhooks/backoff.js';

const delays = [5_000, 300_000, 1_800_000];

test('attempt n waits retryDelaysMs[n-1]; after the last there is none', (t) => {
  const exact = () => 0.5;
  t.is(retryDelay(1, delays, exact), 5_000);
  t.is(retryDelay(2, delays, exact), 300_000);
  t.is(retryDelay(3, delays, exact), 1_800_000);
  t.is(retryDelay(4, delays, exact), null);
  t.is(retryDelay(1, [], exact), null);
});

test('jitter spreads each delay by +-20 %', (t) => {
  t.is(retryDelay(1, delays, () => 0), 4_000);
  t.is(retryDelay(1, delays, () => 0.999999), 6_000);
  for (let i = 0; i < 200; i++) {
    const d = retryDelay(2, delays, Math.random)!;
    t.true(d >= 240_000 && d <= 360_000);
  }
});
