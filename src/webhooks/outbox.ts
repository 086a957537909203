import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.js';
import { errorMessage } from '../domain/errors.js';
import type { GatewayEvent } from '../events/types.js';
import {
  applyPatch,
  patchOf,
  stateOf,
  type DeliveryListing,
  type DeliveryPatch,
  type DeliveryRecord,
  type DeliveryState,
  type DeliveryStatus,
  type OutboxStore,
  type RequeueResult,
} from '../storage/ports/outbox.js';
import { newDeliveryId, newDeliveryRecord } from './delivery-record.js';
import { InstanceQueue, type PendingDelivery } from './instance-queue.js';

export interface OutboxOptions {
  store: OutboxStore;
  /** Past this many pending deliveries per instance the oldest are marked failed. */
  maxPendingPerInstance: number;
  /** Finished deliveries kept per instance. */
  historyPerInstance: number;
  /** Wall-clock time: what is stored and shown (createdAt, nextAttemptAt...). */
  clock: Clock;
  /**
   * Time that never steps (due times in memory): a retry due in 5 s is made 5 s later whatever
   * the wall clock does meanwhile.
   */
  monotonic: () => number;
  /**
   * The longest wait between attempts (the largest retry delay with its jitter): a stored
   * nextAttemptAt further ahead than this (the wall clock stepped back) is not waited for.
   */
  maxRetryDelayMs: number;
  logger: Logger;
  instanceExists: (id: string) => boolean;
}

/**
 * The webhook outbox as the scheduler sees it: per instance, the pending deliveries in memory, in
 * lanes (instance-queue.ts) with their due times, over the store that holds them durably
 * (storage/ports/outbox.ts). It enforces the bounds (pending and history); the deliverer picks
 * what to attempt and reports outcomes here.
 */
export class Outbox {
  private readonly queues = new Map<string, InstanceQueue>();

  constructor(private readonly options: OutboxOptions) {}

  get store(): OutboxStore {
    return this.options.store;
  }

  get(instanceId: string): InstanceQueue | undefined {
    return this.queues.get(instanceId);
  }

  *all(): IterableIterator<InstanceQueue> {
    yield* this.queues.values();
  }

  pendingCount(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.pending.size;
    return n;
  }

  private queueFor(instanceId: string): InstanceQueue {
    let q = this.queues.get(instanceId);
    if (!q) {
      q = new InstanceQueue(instanceId);
      this.queues.set(instanceId, q);
    }
    return q;
  }

  /** Loads what the store holds for every known instance: its pending deliveries resume. */
  async load(): Promise<void> {
    for (const id of await this.store.instances()) {
      if (this.options.instanceExists(id)) await this.loadInstance(id);
    }
  }

  /** Takes over an instance's pending deliveries from the store (at start, or when it moves here). */
  async loadInstance(instanceId: string): Promise<void> {
    const { deliveries, lastSeq } = await this.store.loadPending(instanceId);
    const q = this.queueFor(instanceId);
    q.lastSeq = Math.max(q.lastSeq, lastSeq);
    for (const state of deliveries) if (!q.pending.has(state.id)) q.add(this.pendingOf(state, this.resumeAt(state.nextAttemptAt)));
    this.enforceBound(q);
    this.pruneHistory(q);
    if (q.pending.size > 0) this.options.logger.info({ instanceId, pending: q.pending.size }, 'resuming webhook deliveries');
  }

  /**
   * When a stored delivery is due, on the monotonic clock: its nextAttemptAt as a wait from now,
   * never more than the longest retry delay (the wall clock may have stepped back since it was
   * written), never less than nothing.
   */
  private resumeAt(nextAttemptAt: string | null): number {
    const now = this.options.monotonic();
    const at = nextAttemptAt === null ? Number.NaN : Date.parse(nextAttemptAt);
    if (!Number.isFinite(at)) return now;
    return now + Math.min(this.options.maxRetryDelayMs, Math.max(0, at - this.options.clock.now()));
  }

  private pendingOf(state: DeliveryState, dueAt: number): PendingDelivery {
    return { id: state.id, lane: state.lane, seq: state.seq, state, dueAt, durable: true, inFlight: false, abort: null, urgent: state.type === 'webhook.test' };
  }

  /**
   * Stores a new delivery; resolves once the store has it durably, so an event acknowledged
   * upstream after this is never lost. It joins its lane at once (not yet attemptable) so two
   * events of one chat keep their order.
   */
  async append(event: GatewayEvent): Promise<DeliveryRecord> {
    const q = this.queueFor(event.instanceId);
    const now = this.options.clock.now();
    const record = newDeliveryRecord(event, newDeliveryId(now), q.lastSeq + 1, now);
    const d = this.pendingOf(stateOf(record), this.options.monotonic());
    d.durable = false;
    q.add(d);
    q.keepEvent(d, event);
    try {
      await this.store.append(record);
    } catch (err) {
      q.remove(d);
      throw err;
    }
    d.durable = true;
    this.enforceBound(q);
    return record;
  }

  /** The body of a pending delivery (null when the store no longer has it). */
  readEvent(q: InstanceQueue, d: PendingDelivery): Promise<GatewayEvent | null> {
    const kept = q.takeEvent(d);
    return kept ? Promise.resolve(kept) : this.store.readEvent(q.instanceId, d.id);
  }

  /**
   * Records the outcome of an attempt (`patch`: the delivery's new state). A finished delivery
   * leaves its lane at once: the next delivery of its chat need not wait for the store. Its
   * outcome is written durably but not waited for by the queue: a crash before it is stored
   * means one more, duplicate, delivery, which at-least-once allows. A retry (`dueAt` on the
   * monotonic clock) is written lazily: lost in a crash, the delivery is attempted sooner. The
   * returned promise settles when the store has it.
   */
  save(q: InstanceQueue, d: PendingDelivery, patch: DeliveryPatch, dueAt: number): Promise<void> {
    if (this.queues.get(q.instanceId) !== q || q.pending.get(d.id) !== d) {
      q.remove(d);
      return Promise.resolve();
    }
    applyPatch(d.state, patch);
    if (patch.status !== 'pending') {
      q.remove(d);
      // The store copies the patch's fields (no copy of our own on the hot path).
      const written = this.store.saveOutcome(q.instanceId, patch, { durable: true });
      this.pruneHistory(q);
      return written;
    }
    d.dueAt = dueAt;
    const written = this.store.saveOutcome(q.instanceId, patch, { durable: false });
    // The bound may have been left exceeded while this one was in flight (not droppable).
    this.enforceBound(q);
    return written;
  }

  /** Marks the oldest pending deliveries failed while the instance holds more than the limit. */
  private enforceBound(q: InstanceQueue): void {
    const max = this.options.maxPendingPerInstance;
    let dropped = 0;
    while (q.pending.size > max) {
      const victim = q.oldestDroppable();
      if (!victim) break;
      q.remove(victim);
      const iso = new Date(this.options.clock.now()).toISOString();
      Object.assign(victim.state, {
        status: 'failed',
        lastError: `dropped: more than ${max} deliveries pending for this instance (webhooks.maxPendingPerInstance)`,
        nextAttemptAt: null,
        finishedAt: iso,
      } satisfies Partial<DeliveryPatch>);
      this.lazily(q, this.store.saveOutcome(q.instanceId, patchOf(victim.state), { durable: false }));
      this.options.logger.warn({ instanceId: q.instanceId, deliveryId: victim.id, max }, 'webhook outbox full: oldest pending delivery marked failed');
      dropped += 1;
    }
    if (dropped > 0) this.pruneHistory(q);
  }

  private pruneHistory(q: InstanceQueue): void {
    this.lazily(q, this.store.pruneHistory(q.instanceId, this.options.historyPerInstance));
  }

  /** A write whose loss costs at most one more attempt: nobody waits for it. */
  private lazily(q: InstanceQueue, written: Promise<void>): void {
    written.catch((err: unknown) => {
      this.options.logger.warn({ instanceId: q.instanceId, error: errorMessage(err) }, 'could not record a webhook delivery change');
    });
  }

  /**
   * Puts a finished (usually failed) delivery back in the queue with the same webhook-id, at the
   * back of its lane; a pending one is left as it is.
   */
  async requeue(instanceId: string, deliveryId: string): Promise<RequeueResult> {
    const q = this.queueFor(instanceId);
    const queued = q.pending.get(deliveryId);
    if (queued) return { outcome: 'already-pending', state: stateOf(queued.state) };
    // The seq is taken now: an event stored while this is written comes after it after a restart.
    // (In memory it may come first, as it joins its lane before this one does; either order is
    // one the two could have arrived in.)
    const seq = ++q.lastSeq;
    const result = await this.store.requeue(instanceId, deliveryId, { seq, at: new Date(this.options.clock.now()).toISOString() });
    if (result.outcome === 'requeued' && this.queues.get(instanceId) === q && !q.pending.has(deliveryId)) {
      q.add(this.pendingOf(stateOf(result.state), this.options.monotonic()));
      this.enforceBound(q);
    }
    return result;
  }

  /**
   * The instance's webhook now points elsewhere: its pending deliveries are due now instead of
   * waiting out the backoff the old target earned them.
   */
  retarget(instanceId: string): number {
    const q = this.queues.get(instanceId);
    if (!q) return 0;
    const now = this.options.monotonic();
    let moved = 0;
    for (const d of q.pending.values()) {
      if (d.inFlight || d.dueAt <= now) continue;
      d.dueAt = now;
      moved += 1;
    }
    return moved;
  }

  /** Deliveries of an instance, newest first (see OutboxStore.list). */
  list(instanceId: string, options: { status?: DeliveryStatus; limit?: number } = {}): Promise<DeliveryListing> {
    return this.store.list(instanceId, options);
  }

  /** The instance was deleted: drop its queue and abort its attempts. */
  forget(instanceId: string): void {
    const q = this.queues.get(instanceId);
    if (!q) return;
    for (const d of q.pending.values()) d.abort?.abort();
    this.queues.delete(instanceId);
  }

  /** The instance is being deleted: forget it, and remove what the store holds for it. */
  async removeInstance(instanceId: string): Promise<void> {
    this.forget(instanceId);
    await this.store.removeInstance(instanceId);
  }
}
