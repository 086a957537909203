/**
 * Cooperative time slices for long chains of promise work. A chain that never waits on I/O (Signal
 * decryption of a first history sync: hundreds of messages, each an await on an in-memory key
 * store, queued behind one another on Baileys' mutexes) runs entirely in one microtask drain: the
 * event loop is stuck until the whole chain ends, and HTTP requests, timers and every other
 * session wait. With a thousand accounts pairing that was a loop lag of over a second.
 *
 * `pauseIfLong()` is called at natural await points of such chains: once the current turn of the
 * event loop has run for SLICE_MS, it returns a promise that resolves on a later turn, when that
 * turn has time left and the chains paused before it have gone on (see pump), so I/O and timers
 * run in between; otherwise null (no await, no cost).
 */

/** Work per turn before a chain gives the event loop back. */
export const SLICE_MS = 10;

/** When the current slice began; reset by an immediate at the end of the turn it began in. */
let sliceStart = 0;
let armed = false;

function endSlice(): void {
  armed = false;
}

/** Whether this turn of the event loop has run longer than SLICE_MS since the first check in it. */
export function sliceSpent(now: number = performance.now()): boolean {
  if (!armed) {
    armed = true;
    sliceStart = now;
    // Runs before the immediates of paused chains (queued earlier), so they start a fresh slice.
    setImmediate(endSlice);
    return false;
  }
  return now - sliceStart > SLICE_MS;
}

/** Chains paused, oldest first: they resume in this order (see pump). */
const waiting: Array<() => void> = [];

/**
 * Resumes the oldest paused chain, if the current turn still has time; else tries again next turn.
 * One pump is queued per pause, so a turn runs as many pumps as there are chains waiting, each
 * after the microtasks of the one before (Node drains microtasks between immediates): chains go
 * on one after another until the slice is spent. Resuming the oldest (not the pump's own chain)
 * keeps it fair: a chain that just ran and paused again waits behind the others.
 */
function pump(): void {
  if (waiting.length === 0) return;
  if (sliceSpent()) {
    setImmediate(pump);
    return;
  }
  waiting.shift()!();
}

/**
 * Runs `work` on a later turn, in line behind every chain and piece of work paused before it, once
 * that turn has time left; the microtasks `work` starts run before the next in line (see pump).
 */
export function runWhenTurnHasTime(work: () => void): void {
  waiting.push(work);
  setImmediate(pump);
}

/** A promise for a later turn when this one has run long, else null (go on synchronously). */
export function pauseIfLong(): Promise<void> | null {
  if (!sliceSpent()) return null;
  return new Promise<void>((resolve) => runWhenTurnHasTime(resolve));
}
