import test from 'ava';
import { KeepaliveClock } from '../../src/connection/baileys/keepalive-clock.js';
import { busy, watchTimerGaps } from '../helpers/timer-gaps.js';

// Rule (issue "Performance, round 2", item 3: no stall while phones pair): the keepalives due in
// one tick of the daemon's clock (~33 a tick at 1,000 sessions, each a Baileys query) share the
// event loop's time slices: past ~10 ms of them in one turn the rest fire on the turns after, and
// timers run in between; each still fires once, on its own tick, and a stopped one not at all.

test('200 keepalives of ~1 ms due in one tick: a timer runs every slice, each beat fires once with its tick, a beat stopped while waiting does not', async (t) => {
  const clock = new KeepaliveClock(50);
  const fired = new Map<number, number[]>();
  const gaps = watchTimerGaps();
  const stops: Array<() => void> = [];
  for (let i = 0; i < 200; i++) {
    stops.push(
      clock.every(50, (n) => {
        if (fired.has(i)) return; // one round is enough
        busy(1);
        gaps.unitDone();
        fired.set(i, [n]);
        // The last beat of the first slice stops one still waiting: it must not fire.
        if (fired.size === 5) stops[199]!();
      }),
    );
  }
  const until = performance.now() + 20_000;
  while (fired.size < 199 && performance.now() < until) await new Promise((r) => setTimeout(r, 10));
  const most = gaps.stop();
  for (const stop of stops) stop();
  t.is(fired.size, 199);
  t.false(fired.has(199), 'the beat stopped while it waited for a turn fired');
  t.is(new Set([...fired.values()].map(([n]) => n)).size, 1, 'every beat got the tick it was due in');
  // ~10 per 10 ms slice; all 200 in one timer callback before.
  t.true(most <= 30, `${most} beats of ~1 ms with no timer run in between`);
});
