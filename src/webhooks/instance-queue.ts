import type { GatewayEvent } from '../events/types.js';
import type { AttemptAbort } from './http-post.js';
import type { DeliveryState } from '../storage/ports/outbox.js';

/** What the scheduler keeps in memory per pending delivery: its state (the body stays in the store, and a new one's in memory until its first attempt). */
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
  abort: AttemptAbort | null;
  /** A test event: asked for now, so attempted before the instance's other due deliveries. */
  readonly urgent: boolean;
  /**
   * The event itself, kept from its append until its first attempt (see InstanceQueue.keepEvent),
   * so that attempt need not read it back from the store; later attempts read the store.
   */
  event?: GatewayEvent;
}

/**
 * Events kept in memory per instance for their first attempt. On PostgreSQL, reading each event
 * back was one more round trip per delivery (bench/pg-diag.ts MODE=inbound); 256 covers a burst at
 * webhooks.concurrency while bounding memory to a few hundred KB per instance.
 */
export const KEPT_EVENTS = 256;

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
  /** Deliveries holding their event in memory (at most KEPT_EVENTS). */
  private kept = 0;

  constructor(readonly instanceId: string) {}

  add(d: PendingDelivery): void {
    this.pending.set(d.id, d);
    const lane = this.lanes.get(d.lane);
    if (lane) lane.push(d);
    else this.lanes.set(d.lane, [d]);
    this.lastSeq = Math.max(this.lastSeq, d.seq);
  }

  /**
   * Keeps a new delivery's event in memory for its first attempt, while fewer than KEPT_EVENTS of
   * this instance's deliveries hold one: a backlog behind a receiver that is down reads its events
   * from the store, as after a restart, instead of holding them all.
   */
  keepEvent(d: PendingDelivery, event: GatewayEvent): void {
    if (this.kept >= KEPT_EVENTS || d.event) return;
    d.event = event;
    this.kept += 1;
  }

  /** The kept event of `d` (once: it is let go), or undefined. */
  takeEvent(d: PendingDelivery): GatewayEvent | undefined {
    const e = d.event;
    if (e) {
      delete d.event;
      this.kept -= 1;
    }
    return e;
  }

  remove(d: PendingDelivery): void {
    if (this.pending.get(d.id) !== d) return;
    this.takeEvent(d);
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
