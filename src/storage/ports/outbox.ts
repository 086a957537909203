import type { WebhookEventType } from '../../domain/types.js';
import type { GatewayEvent } from '../../events/types.js';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/**
 * What changes about a delivery after it is stored: its place in its instance's queue and the
 * outcome of its attempts (a row update; a `s` line of the files engine's journal).
 */
export interface DeliveryPatch {
  /** The `webhook-id` header: stable across retries and redeliveries. */
  id: string;
  /** Queue position within the instance, increasing; a redelivery gets a new one (goes to the back). */
  seq: number;
  status: DeliveryStatus;
  /** Attempts since it was (re)queued. */
  attempts: number;
  lastAttemptAt: string | null;
  /** Why the last attempt failed, as the instance sees it (may quote the receiver's answer). */
  lastError: string | null;
  /** HTTP status of the last attempt that got an answer. */
  lastStatus: number | null;
  /** Wall-clock ISO time of the next attempt: shown, and where a restart resumes. */
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  /** When it became delivered or failed; history is pruned oldest-finished first. */
  finishedAt: string | null;
  redeliveries: number;
}

/** A delivery without its event: what `list` shows and what the scheduler keeps of a pending one. */
export interface DeliveryState extends DeliveryPatch {
  v: 1;
  instanceId: string;
  type: WebhookEventType;
  /** Ordering lane: deliveries of one lane go out in `seq` order (see webhooks/delivery-record.ts). */
  lane: string;
  createdAt: string;
}

/** One delivery: its state and the event, the exact body every attempt sends (stored once). */
export interface DeliveryRecord extends DeliveryState {
  event: GatewayEvent;
}

/** Delivery ids are the `webhook-id` header and may name files: checked before use. */
export const DELIVERY_ID_PATTERN = /^msg_[0-9a-z]{8,40}$/;

export function isDeliveryId(value: string): boolean {
  return DELIVERY_ID_PATTERN.test(value);
}

export interface DeliveryListing {
  counts: Record<DeliveryStatus, number>;
  /** Newest first (createdAt, then id), filtered by status, at most `limit`. */
  deliveries: DeliveryState[];
}

export type RequeueResult = { outcome: 'requeued' | 'already-pending'; state: DeliveryState } | { outcome: 'not-found' };

/**
 * The webhook outbox, per instance: a delivery is stored once (its event with it), then only its
 * state changes. Keyed by instance id first, then delivery id, so an engine of rows holds it as a
 * table with that key and updates a row per outcome. The scheduler (src/webhooks/) keeps the
 * pending deliveries of the instances this node serves in memory, and asks the store only for
 * bodies, for listings and to record what happened.
 *
 * Writes reject with STORAGE_UNAVAILABLE (or the engine's error) when they cannot be stored; a
 * `durable: false` write may be lost in a crash, but never reorders the writes before it.
 */
export interface OutboxStore {
  /** Instances with anything stored (pending or history), whose pending deliveries a start resumes. */
  instances(): Promise<string[]>;
  /**
   * An instance's pending deliveries in queue order (seq), and the highest seq it ever used (new
   * deliveries and redeliveries take the next ones). Used at start, and when this node takes an
   * instance over.
   */
  loadPending(instanceId: string): Promise<{ deliveries: DeliveryState[]; lastSeq: number }>;
  /** Stores a new delivery; resolves once it is durable (the event may then be acknowledged upstream). */
  append(record: DeliveryRecord): Promise<void>;
  /** The event of a delivery, or null when the delivery is gone (pruned, instance removed). */
  readEvent(instanceId: string, deliveryId: string): Promise<GatewayEvent | null>;
  /**
   * Records a delivery's new state (an attempt's outcome, dropped past the pending bound). Durable
   * writes resolve once stored; lazy ones once queued. An unknown delivery is ignored.
   */
  saveOutcome(instanceId: string, patch: DeliveryPatch, options: { durable: boolean }): Promise<void>;
  /** Deliveries of an instance for GET deliveries (any node may serve it). */
  list(instanceId: string, options?: { status?: DeliveryStatus; limit?: number }): Promise<DeliveryListing>;
  /**
   * Puts a finished delivery back in the queue (same id, so the same `webhook-id`) as pending with
   * `seq`, no attempts, `nextAttemptAt` = `at`, one more redelivery; durable before it resolves. A
   * pending one is left as it is.
   */
  requeue(instanceId: string, deliveryId: string, options: { seq: number; at: string }): Promise<RequeueResult>;
  /**
   * Forgets the oldest finished deliveries (by finishedAt) past `keep`. An engine may batch: it
   * keeps at most `keep + max(10, keep / 10)` finished deliveries, never a pending one. Lazy.
   */
  pruneHistory(instanceId: string, keep: number): Promise<void>;
  /** The instance is deleted: everything stored for it goes. */
  removeInstance(instanceId: string): Promise<void>;
  /** Writes what is queued and closes. */
  close(): Promise<void>;
}

/** A delivery's state without its event (a copy). */
export function stateOf(r: DeliveryState): DeliveryState {
  return {
    v: r.v,
    id: r.id,
    instanceId: r.instanceId,
    type: r.type,
    lane: r.lane,
    seq: r.seq,
    createdAt: r.createdAt,
    status: r.status,
    attempts: r.attempts,
    lastAttemptAt: r.lastAttemptAt,
    lastError: r.lastError,
    lastStatus: r.lastStatus,
    nextAttemptAt: r.nextAttemptAt,
    deliveredAt: r.deliveredAt,
    finishedAt: r.finishedAt,
    redeliveries: r.redeliveries,
  };
}

/** The fields that change after a delivery is stored. */
export function patchOf(s: DeliveryPatch): DeliveryPatch {
  return {
    id: s.id,
    seq: s.seq,
    status: s.status,
    attempts: s.attempts,
    lastAttemptAt: s.lastAttemptAt,
    lastError: s.lastError,
    lastStatus: s.lastStatus,
    nextAttemptAt: s.nextAttemptAt,
    deliveredAt: s.deliveredAt,
    finishedAt: s.finishedAt,
    redeliveries: s.redeliveries,
  };
}

/** Applies a newer state to a delivery. */
export function applyPatch(s: DeliveryPatch, p: DeliveryPatch): void {
  s.seq = p.seq;
  s.status = p.status;
  s.attempts = p.attempts;
  s.lastAttemptAt = p.lastAttemptAt;
  s.lastError = p.lastError;
  s.lastStatus = p.lastStatus;
  s.nextAttemptAt = p.nextAttemptAt;
  s.deliveredAt = p.deliveredAt;
  s.finishedAt = p.finishedAt;
  s.redeliveries = p.redeliveries;
}
