import test from 'ava';
import { keepAliveIntervalMs } from '../../src/connection/baileys/keepalive.js';

const KEEPALIVE_MIN_MS = 25_000;
const KEEPALIVE_MAX_MS = 35_000;
import { makeHarness } from './baileys-fake-socket.js';

// Rule (issue "Performance, round 2", item 3): sessions that log in together do not ping WhatsApp
// in the same second forever: each draws its keepalive interval in [25 s, 35 s] (Baileys' 30 s, a
// sixth either side).

test('the interval stays within 25-35 s at both ends of the random draw', (t) => {
  t.is(keepAliveIntervalMs(() => 0), 25_000);
  t.is(keepAliveIntervalMs(() => 0.999_999_9), 35_000);
  t.is(keepAliveIntervalMs(() => 0.5), 30_000);
  t.is(keepAliveIntervalMs(() => 0, 300), 250, 'around another default, the same spread');
  t.is(keepAliveIntervalMs(() => 0.999_999_9, 300), 350);
});

test('sessions get different intervals, spread over the whole range', (t) => {
  const drawn = Array.from({ length: 200 }, () => keepAliveIntervalMs());
  t.true(drawn.every((ms) => Number.isInteger(ms) && ms >= KEEPALIVE_MIN_MS && ms <= KEEPALIVE_MAX_MS));
  t.true(new Set(drawn).size > 150, `${new Set(drawn).size} distinct intervals of 200`);
  t.true(Math.min(...drawn) < 27_000 && Math.max(...drawn) > 33_000, 'the whole range is used');
  t.not(keepAliveIntervalMs(() => 0.1), keepAliveIntervalMs(() => 0.2));
});

test("the connection hands its interval to Baileys' socket, the same one on every reconnect", async (t) => {
  const h = await makeHarness();
  t.teardown(() => h.cleanup());
  h.conn.start();
  const s1 = await h.socket(1);
  t.is(s1.config.keepAliveIntervalMs, 30_000, 'the harness draws 0.5');
  await s1.close(515);
  const s2 = await h.socket(2);
  t.is(s2.config.keepAliveIntervalMs, s1.config.keepAliveIntervalMs);
});
