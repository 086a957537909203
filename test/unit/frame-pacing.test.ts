import test from 'ava';
import { EventEmitter } from 'node:events';
import { paceIncomingFrames } from '../../src/connection/baileys/frame-pacing.js';
import { busy, watchTimerGaps } from '../helpers/timer-gaps.js';

// Rule (issue "Performance, round 2", item 3: no stall while phones pair): when hundreds of
// sockets have frames ready in one poll phase, their handling gives the event loop a turn every
// ~10 ms slice instead of running all of them in that one turn; each socket's frames still reach
// Baileys in the order they came, none lost, and other events pass straight through.
// Serial: the slice is one per process, and these tests measure it.

/** A socket as Baileys' WebSocket client is: an EventEmitter whose `message` listener handles one frame, partly in microtasks. */
function socket(name: string, got: string[], costMs: number): EventEmitter {
  const ws = new EventEmitter();
  ws.on('message', (frame: string) => {
    // Baileys' onMessageReceived: decoding awaits, then the stanza's handlers run in microtasks.
    void Promise.resolve().then(() => {
      busy(costMs);
      got.push(`${name}:${frame}`);
    });
  });
  paceIncomingFrames(ws);
  return ws;
}

test.serial('frames that arrive while a turn has time go to Baileys at once, in the same turn', async (t) => {
  await new Promise((r) => setImmediate(r));
  const got: string[] = [];
  const ws = socket('a', got, 0);
  ws.emit('message', '1');
  ws.emit('message', '2');
  await Promise.resolve();
  await Promise.resolve();
  t.deepEqual(got, ['a:1', 'a:2']);
});

test.serial('200 sockets with a frame of ~1 ms each ready in one poll phase: timers run every slice, every frame arrives, in order per socket', async (t) => {
  await new Promise((r) => setImmediate(r));
  const got: string[] = [];
  const sockets = Array.from({ length: 200 }, (_, i) => socket(`s${i}`, got, 1));
  const gaps = watchTimerGaps();
  const counted = got.push.bind(got);
  got.push = (...items: string[]): number => {
    items.forEach(() => gaps.unitDone());
    return counted(...items);
  };
  // As libuv's poll phase does: every socket's read callback in one turn, each followed by its
  // microtasks (immediates queued together run in one turn, microtasks drained after each); three
  // frames a read, as the ws parser emits every frame of a chunk at once.
  for (const ws of sockets) {
    setImmediate(() => {
      ws.emit('message', '1');
      ws.emit('message', '2');
      ws.emit('message', '3');
    });
  }
  while (got.length < 600) await new Promise((r) => setTimeout(r, 5));
  const timerRuns = gaps.timerRuns;
  const most = gaps.stop();
  t.is(got.length, 600);
  for (let i = 0; i < 200; i++) t.deepEqual(got.filter((g) => g.startsWith(`s${i}:`)), [`s${i}:1`, `s${i}:2`, `s${i}:3`]);
  // ~10 per 10 ms slice plus the ones in flight when the slice ran out; all 600 in one turn without pacing.
  t.true(most <= 40, `${most} frames of ~1 ms with no timer run in between`);
  t.true(timerRuns >= 15, `the timer ran ${timerRuns} times while 600 frames were handled`);
});

test.serial('events other than frames pass straight through, even while frames wait', async (t) => {
  await new Promise((r) => setImmediate(r));
  const ws = new EventEmitter();
  const seen: string[] = [];
  ws.on('message', (f: string) => seen.push(`message:${f}`));
  ws.on('close', () => seen.push('close'));
  paceIncomingFrames(ws);
  ws.emit('message', 'early'); // the turn's first frame starts its slice
  busy(15); // this turn's slice is spent: frames wait for a later turn
  ws.emit('message', 'late');
  t.true(ws.emit('close'));
  t.deepEqual(seen, ['message:early', 'close']);
  await new Promise((r) => setTimeout(r, 20));
  t.deepEqual(seen, ['message:early', 'close', 'message:late']);
});
