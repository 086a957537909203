/** What the deliverer keeps in memory per pending delivery: state only, the body stays on disk. */
export interface PendingDelivery {
  readonly id: string;
  readonly lane: string;
  readonly seq: number;
  nextAttemptAt: number;
  /** False until its journal line is on disk; a lane never moves past a delivery that is not durable yet. */
  durable: boolean;
  inFlight: boolean;
  abort: AbortController | null;
}

interface FinishedEntry {
  id: string;
  finishedAt: number;
}

/**
 * One instance's queue: every pending delivery in queue order, split into lanes (one per chat,
 * one for instance-wide events). Only a lane's head may be attempted, so a delivery being retried
 * holds back later events of its chat but not other chats.
 */
export class InstanceQueue {
  /** Insertion order is queue order; the first entries are the oldest. */
  readonly pending = new Map<string, PendingDelivery>();
  private readonly lanes = new Map<string, PendingDelivery[]>();
  /** Finished deliveries kept (the history), oldest finished first. */
  private history: FinishedEntry[] = [];
  /** Highest seq handed out or loaded. */
  lastSeq = 0;

  constructor(readonly instanceId: string) {}

  add(d: PendingDelivery): void {
    this.pending.set(d.id, d);
    const lane = this.lanes.get(d.lane);
    if (lane) lane.push(d);
    else this.lanes.set(d.lane, [d]);
    this.lastSeq = Math.max(this.lastSeq, d.seq);
  }

  remove(d: PendingDelivery): void {
    if (this.pending.get(d.id) !== d) return;
    this.pending.delete(d.id);
    const lane = this.lanes.get(d.lane);
    if (!lane) return;
    const i = lane.indexOf(d);
    if (i >= 0) lane.splice(i, 1);
    if (lane.length === 0) this.lanes.delete(d.lane);
  }

  /** The first delivery of every lane. */
  *heads(): IterableIterator<PendingDelivery> {
    for (const lane of this.lanes.values()) {
      if (lane[0]) yield lane[0];
    }
  }

  /** The oldest pending delivery that may be dropped now (stored, not being attempted). */
  oldestDroppable(): PendingDelivery | undefined {
    for (const d of this.pending.values()) {
      if (d.durable && !d.inFlight) return d;
    }
    return undefined;
  }

  addFinished(id: string, finishedAt: number): void {
    this.history.push({ id, finishedAt });
  }

  /** Finished entries in the order they finished (loading sorts them first). */
  sortHistory(): void {
    this.history.sort((a, b) => a.finishedAt - b.finishedAt);
  }

  forgetFinished(id: string): void {
    this.history = this.history.filter((e) => e.id !== id);
  }

  get historySize(): number {
    return this.history.length;
  }

  /** Takes the oldest finished entry off the list (to be pruned from the history). */
  shiftFinished(): string | undefined {
    return this.history.shift()?.id;
  }
}
