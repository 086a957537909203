import type { DeliveryState } from '../storage/ports/outbox.js';

/** What the scheduler keeps in memory per pending delivery: its state; the body stays in the store. */
export interface PendingDelivery {
  readonly id: string;
  readonly lane: string;
  readonly seq: number;
  /** The delivery as stored (updated here first, then saved). */
  readonly state: DeliveryState;
  /** When it may be attempted, on the monotonic clock (see OutboxOptions.monotonic). */
  dueAt: number;
  /** False until the store has it durably; a lane never moves past a delivery that is not durable yet. */
  durable: boolean;
  inFlight: boolean;
  abort: AbortController | null;
  /** A test event: asked for now, so attempted before the instance's other due deliveries. */
  readonly urgent: boolean;
}

/**
 * One instance's queue: every pending delivery in queue order, split into lanes (one per chat,
 * one for instance-wide events, one per test event). Only a lane's head may be attempted, so a
 * delivery being retried holds back later events of its chat but not other chats.
 */
export class InstanceQueue {
  /** Insertion order is queue order; the first entries are the oldest. */
  readonly pending = new Map<string, PendingDelivery>();
  private readonly lanes = new Map<string, PendingDelivery[]>();
  /** Highest seq handed out or loaded. */
  lastSeq = 0;
  /** Attempts of this instance in flight (its share of webhooks.concurrency, see fair-share.ts). */
  inFlight = 0;

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
}
