import { readdirSync, readFileSync } from 'node:fs';
import { constants, setPriority } from 'node:os';

/**
 * Node's own helper threads: V8's platform workers (they run the concurrent marking, the parallel
 * compaction and the sweeping of every heap in the process) and the thread that schedules their
 * delayed tasks. With the sessions on threads of their own, nearly all of their work is the session
 * threads' collections (heaps of hundreds of MB, a marking of seconds while phones pair), yet they
 * ran at the daemon's priority: on two cores, at 400 pairings the daemon's thread waited on the
 * run queue as long as it ran, and its event loop stalled 101 to 119 ms; with them at the session
 * threads' nice, 93 (README, Performance, "Who waits for a core").
 *
 * Found on Linux by their signal mask: Node blocks SIGUSR1 while it creates them (the inspector's
 * signal is for the main thread); the threads made later (libuv's pool, Workers and what they
 * start) do not block it. Elsewhere, or if a Node made them differently, none is found and nothing
 * changes.
 */
export function nodeHelperThreads(pid: number = process.pid): number[] {
  if (process.platform !== 'linux') return [];
  const bit = 1n << BigInt(constants.signals.SIGUSR1 - 1);
  const found: number[] = [];
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  for (const tid of tids) {
    if (tid === String(pid)) continue;
    try {
      const mask = /^SigBlk:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8'))?.[1];
      if (mask && (BigInt(`0x${mask}`) & bit) !== 0n) found.push(Number(tid));
    } catch {
      // the thread ended meanwhile
    }
  }
  return found;
}

/** Sets Node's helper threads (see nodeHelperThreads) to `nice`; returns how many were set. */
export function lowerNodeHelperThreads(nice: number): number {
  let lowered = 0;
  for (const tid of nodeHelperThreads()) {
    try {
      setPriority(tid, nice);
      lowered += 1;
    } catch {
      // gone, or not ours to change: it keeps its priority
    }
  }
  return lowered;
}
