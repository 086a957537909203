import type { InstanceQueue, PendingDelivery } from './instance-queue.js';

/** An instance with lane heads due now. */
export interface DueHeads {
  queue: InstanceQueue;
  due: PendingDelivery[];
}

/**
 * How many attempts one instance may have in flight while `active` instances have work: an even
 * split of webhooks.concurrency, less an eighth kept free for instances that become due meanwhile.
 * Without it one instance whose receiver hangs took every slot for a whole timeout, round after
 * round (issue 21: another instance's event arrived 49 s late behind 320 hung attempts).
 */
export function instanceShare(concurrency: number, active: number): number {
  const reserve = Math.floor(concurrency / 8);
  return Math.max(1, Math.ceil((concurrency - reserve) / Math.max(1, active)));
}

const byUrgencyThenDue = (a: PendingDelivery, b: PendingDelivery): number => Number(b.urgent) - Number(a.urgent) || a.dueAt - b.dueAt || a.seq - b.seq;

/**
 * Which due lane heads start now, given `free` slots: test events first (asked for now: past the
 * share), then one attempt at a time to the instance with the fewest in flight, each up to `share`;
 * ties go round the instances, starting at `turn`, so none waits on another's backlog.
 */
export function pickFair(candidates: readonly DueHeads[], free: number, share: number, turn: number): Array<[InstanceQueue, PendingDelivery]> {
  const picked: Array<[InstanceQueue, PendingDelivery]> = [];
  const n = candidates.length;
  if (free <= 0 || n === 0) return picked;
  const start = turn % n;
  const order = candidates.map((c, i) => {
    c.due.sort(byUrgencyThenDue);
    return { c, rank: (i - start + n) % n, next: 0, load: c.queue.inFlight };
  });
  for (const o of order) {
    while (free > 0 && o.next < o.c.due.length && o.c.due[o.next]!.urgent) {
      picked.push([o.c.queue, o.c.due[o.next++]!]);
      o.load += 1;
      free -= 1;
    }
  }
  while (free > 0) {
    let best: (typeof order)[number] | null = null;
    for (const o of order) {
      if (o.next >= o.c.due.length || o.load >= share) continue;
      if (!best || o.load < best.load || (o.load === best.load && o.rank < best.rank)) best = o;
    }
    if (!best) break;
    picked.push([best.c.queue, best.c.due[best.next++]!]);
    best.load += 1;
    free -= 1;
  }
  return picked;
}
