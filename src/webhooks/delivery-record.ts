import { randomBytes } from 'node:crypto';
import { WEBHOOK_EVENTS, type WebhookEventType } from '../domain/types.js';
import type { GatewayEvent } from '../events/types.js';
import { isRecord } from '../domain/guards.js';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/**
 * One delivery as stored in `DATA_DIR/outbox/<instanceId>/<id>.json`: the event (the exact body
 * every attempt sends) plus its delivery state. One small file per delivery keeps the cost of a
 * write independent of how many deliveries or instances exist.
 */
export interface DeliveryRecord {
  v: 1;
  /** The `webhook-id` header: stable across retries and redeliveries. */
  id: string;
  instanceId: string;
  type: WebhookEventType;
  /** Ordering lane: deliveries of one lane go out in `seq` order, a retried head blocks its lane. */
  lane: string;
  /** Queue position within the instance, increasing; a redelivery gets a new one (goes to the back). */
  seq: number;
  createdAt: string;
  status: DeliveryStatus;
  /** Attempts since it was (re)queued. */
  attempts: number;
  lastAttemptAt: string | null;
  lastError: string | null;
  /** HTTP status of the last attempt that got an answer. */
  lastStatus: number | null;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  /** When it became delivered or failed; history is pruned oldest-finished first. */
  finishedAt: string | null;
  redeliveries: number;
  event: GatewayEvent;
}

/** Delivery ids double as file names, so they are checked before they touch a path. */
export const DELIVERY_ID_PATTERN = /^msg_[0-9a-z]{8,40}$/;

export function isDeliveryId(value: string): boolean {
  return DELIVERY_ID_PATTERN.test(value);
}

/** `msg_` + time (base 36, sorts roughly by creation) + 64 random bits. */
export function newDeliveryId(now: number): string {
  return `msg_${Math.max(0, Math.floor(now)).toString(36).padStart(9, '0')}${randomBytes(8).toString('hex')}`;
}

/** Events about one chat share a lane (their order matters); instance-wide events share another. */
export function laneOf(event: GatewayEvent): string {
  switch (event.type) {
    case 'message.received':
    case 'conversation.handover':
      return `chat:${event.data.chatId}`;
    default:
      return 'instance';
  }
}

export function newDeliveryRecord(event: GatewayEvent, id: string, seq: number, now: number): DeliveryRecord {
  const iso = new Date(now).toISOString();
  return {
    v: 1,
    id,
    instanceId: event.instanceId,
    type: event.type,
    lane: laneOf(event),
    seq,
    createdAt: iso,
    status: 'pending',
    attempts: 0,
    lastAttemptAt: null,
    lastError: null,
    lastStatus: null,
    nextAttemptAt: iso,
    deliveredAt: null,
    finishedAt: null,
    redeliveries: 0,
    event,
  };
}


const nullableString = (v: unknown): boolean => v === null || typeof v === 'string';

/** Shape check for a parsed delivery file; a foreign or hand-edited file is skipped, not trusted. */
export function isDeliveryRecord(v: unknown): v is DeliveryRecord {
  if (!isRecord(v)) return false;
  return (
    v.v === 1 &&
    typeof v.id === 'string' &&
    isDeliveryId(v.id) &&
    typeof v.instanceId === 'string' &&
    (WEBHOOK_EVENTS as readonly unknown[]).includes(v.type) &&
    typeof v.lane === 'string' &&
    typeof v.seq === 'number' &&
    typeof v.createdAt === 'string' &&
    (v.status === 'pending' || v.status === 'delivered' || v.status === 'failed') &&
    typeof v.attempts === 'number' &&
    nullableString(v.lastAttemptAt) &&
    nullableString(v.lastError) &&
    (v.lastStatus === null || typeof v.lastStatus === 'number') &&
    nullableString(v.nextAttemptAt) &&
    nullableString(v.deliveredAt) &&
    nullableString(v.finishedAt) &&
    typeof v.redeliveries === 'number' &&
    isRecord(v.event) &&
    v.event.type === v.type &&
    v.event.instanceId === v.instanceId &&
    typeof v.event.timestamp === 'string' &&
    isRecord(v.event.data)
  );
}

/** The public view (`webhook deliveries --json`): the state without the event body. */
export type DeliverySummary = Pick<
  DeliveryRecord,
  'id' | 'createdAt' | 'status' | 'attempts' | 'lastError' | 'lastStatus' | 'nextAttemptAt' | 'deliveredAt' | 'finishedAt' | 'redeliveries'
> & { type: WebhookEventType };

export function summarise(r: DeliveryRecord): DeliverySummary {
  return {
    id: r.id,
    type: r.type,
    createdAt: r.createdAt,
    status: r.status,
    attempts: r.attempts,
    lastError: r.lastError,
    lastStatus: r.lastStatus,
    nextAttemptAt: r.nextAttemptAt,
    deliveredAt: r.deliveredAt,
    finishedAt: r.finishedAt,
    redeliveries: r.redeliveries,
  };
}
