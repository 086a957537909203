import test from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuthStore } from '../../src/connection/baileys/auth-state.js';
import { FileAuthStates } from '../../src/storage/files/auth-state.js';
import { UNGUARDED } from '../../src/fs/write-guard.js';
import { pauseIfLong } from '../../src/domain/time-slice.js';
import { silent } from './baileys-fake-socket.js';
import { busy, watchTimerGaps } from '../helpers/timer-gaps.js';

// Rule (issue "Performance, round 2", item 4): a backlog of in-memory Signal work (a first history
// sync's decryptions, each awaiting the key store, chained on Baileys' mutexes) gives the event loop
// a turn every ~10 ms instead of holding it for the whole backlog; what it reads is unchanged.
// Serial: the slice is one per process, and these tests measure it.

/** The most units of `work` done between two runs of a timer (see test/helpers/timer-gaps.ts). */
async function mostUnitsBetweenTimers(work: (unitDone: () => void) => Promise<void>): Promise<number> {
  const gaps = watchTimerGaps();
  await work(gaps.unitDone);
  return gaps.stop();
}

test.serial('a fresh turn goes on at once (no promise, no await)', async (t) => {
  await new Promise((r) => setImmediate(r));
  t.is(pauseIfLong(), null);
});

test.serial('200 decryptions of ~1 ms chained on one mutex, each reading its keys first: the loop runs every slice, and every read is right', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'gw-slice-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const store = await AuthStore.open(new FileAuthStates(join(dir, 'auth'), UNGUARDED), 'inst_slice1', { logger: silent, debounceMs: 60_000 });
  const { keys } = store.state;
  const sessions: Record<string, Uint8Array> = {};
  for (let i = 0; i < 200; i++) sessions[`peer${i}.0`] = new Uint8Array([i % 256]);
  await keys.set({ session: sessions });

  const read: number[] = [];
  const most = await mostUnitsBetweenTimers(async (unitDone) => {
    // As Baileys' mutex does: each message waits for the one before, through promises only.
    let chain: Promise<void> = Promise.resolve();
    for (let i = 0; i < 200; i++) {
      chain = chain.then(async () => {
        const got = await keys.get('session', [`peer${i}.0`]);
        read.push((got[`peer${i}.0`] as Uint8Array)[0]!);
        busy(1); // the curve25519 work of one message
        unitDone();
      });
    }
    await chain;
  });
  t.deepEqual(read, Array.from({ length: 200 }, (_, i) => i % 256));
  // ~10 per 10 ms slice, and a turn of the loop has at most two (work that came with I/O, then
  // the paused chains), plus one started before each check; all 200 at once without slicing.
  t.true(most <= 25, `${most} decryptions of ~1 ms with no timer run in between`);
  await store.flush();
});

test.serial('paused chains take turns: one with a long backlog does not keep the others waiting until it is done', async (t) => {
  const order: string[] = [];
  const run = async (name: string): Promise<void> => {
    for (let i = 0; i < 60; i++) {
      const pause = pauseIfLong();
      if (pause) await pause;
      busy(1);
      order.push(name);
    }
  };
  await Promise.all([run('a'), run('b'), run('c')]);
  // The longest stretch one chain ran while the others still had work: about a slice.
  const lastOf = (name: string) => order.lastIndexOf(name);
  const bothLeft = order.slice(0, Math.min(lastOf('a'), lastOf('b'), lastOf('c')));
  let longest = 0;
  for (let i = 0, n = 0; i < bothLeft.length; i++) longest = Math.max(longest, (n = i > 0 && bothLeft[i] === bothLeft[i - 1] ? n + 1 : 1));
  t.true(longest <= 25, `${longest} units of one chain in a row: ${order.join('')}`);
});
