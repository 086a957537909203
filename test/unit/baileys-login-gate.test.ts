import test from 'ava';
import { LoginGate } from '../../src/connection/baileys/login-gate.js';

test('at most `limit` places at once, given in order; a release is idempotent', async (t) => {
  const gate = new LoginGate(2);
  const order: number[] = [];
  const releases: Array<() => void> = [];
  const waits = [1, 2, 3, 4].map((n) =>
    gate.acquire().then((release) => {
      order.push(n);
      releases.push(release);
    }),
  );
  await new Promise((r) => setImmediate(r));
  t.deepEqual(order, [1, 2]);
  t.is(gate.inFlight, 2);
  t.is(gate.queued, 2);
  releases[0]!();
  releases[0]!(); // twice: still one place back
  await new Promise((r) => setImmediate(r));
  t.deepEqual(order, [1, 2, 3]);
  t.is(gate.inFlight, 2);
  releases[1]!();
  releases[2]!();
  releases[3]?.();
  await Promise.all(waits);
  t.deepEqual(order, [1, 2, 3, 4]);
  releases[3]!();
  t.is(gate.inFlight, 0);
  t.is(gate.queued, 0);
});

test('a limit must be a positive integer', (t) => {
  t.throws(() => new LoginGate(0), { instanceOf: RangeError });
  t.throws(() => new LoginGate(1.5), { instanceOf: RangeError });
});
