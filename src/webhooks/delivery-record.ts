import { randomBytes } from 'node:crypto';
import Type, { type Static } from 'typebox';
import type { WebhookEventType } from '../domain/types.js';
import type { GatewayEvent } from '../events/types.js';
import { matches } from '../schemas/check.js';
import { closed } from '../schemas/common.js';
import { EventTypeSchema } from '../schemas/instance.js';
import { DeliveryStatusSchema } from '../schemas/webhook.js';

export type DeliveryStatus = Static<typeof DeliveryStatusSchema>;

/** Delivery ids are the `webhook-id` header and once were file names: checked before use. */
export const DELIVERY_ID_PATTERN = /^msg_[0-9a-z]{8,40}$/;

const NullableString = Type.Union([Type.String(), Type.Null()]);

/**
 * What changes about a delivery after it is stored: its place in the queue and the outcome of its
 * attempts. A `s` line of the outbox journal carries these (and the id).
 */
const DeliveryStateFields = {
  /** Queue position within the instance, increasing; a redelivery gets a new one (goes to the back). */
  seq: Type.Integer({ minimum: 0 }),
  status: DeliveryStatusSchema,
  /** Attempts since it was (re)queued. */
  attempts: Type.Integer({ minimum: 0 }),
  lastAttemptAt: NullableString,
  lastError: NullableString,
  /** HTTP status of the last attempt that got an answer. */
  lastStatus: Type.Union([Type.Integer(), Type.Null()]),
  nextAttemptAt: NullableString,
  deliveredAt: NullableString,
  /** When it became delivered or failed; history is pruned oldest-finished first. */
  finishedAt: NullableString,
  redeliveries: Type.Integer({ minimum: 0 }),
};

/**
 * The event as stored: the exact body every attempt sends. Checked loosely (its data was checked
 * when the event happened, and older versions may have stored fields since renamed).
 */
const StoredEventSchema = Type.Object({
  type: EventTypeSchema,
  instanceId: Type.String(),
  timestamp: Type.String(),
  data: Type.Record(Type.String(), Type.Unknown()),
});

/**
 * One delivery: the event plus its delivery state. Stored as a `d` line of
 * `DATA_DIR/outbox/<instanceId>/outbox.jsonl` (and, before the journal, as one file
 * `<id>.json` per delivery, which the next start migrates). Unknown fields are allowed, so a
 * record written by a newer version still loads.
 */
export const DeliveryRecordSchema = Type.Object({
  v: Type.Literal(1),
  /** The `webhook-id` header: stable across retries and redeliveries. */
  id: Type.String({ pattern: DELIVERY_ID_PATTERN.source }),
  instanceId: Type.String(),
  type: EventTypeSchema,
  /** Ordering lane: deliveries of one lane go out in `seq` order, a retried head blocks its lane. */
  lane: Type.String(),
  createdAt: Type.String(),
  ...DeliveryStateFields,
  event: StoredEventSchema,
});

export type DeliveryRecord = Omit<Static<typeof DeliveryRecordSchema>, 'type' | 'event'> & {
  type: WebhookEventType;
  event: GatewayEvent;
};

/** A delivery without its event: what memory keeps of every delivery, and what a `s` line changes. */
export type DeliveryState = Omit<DeliveryRecord, 'event'>;

/** A `s` line: the new state of a delivery already in the journal. */
export const DeliveryPatchSchema = closed({ id: Type.String({ pattern: DELIVERY_ID_PATTERN.source }), ...DeliveryStateFields });
export type DeliveryPatch = Static<typeof DeliveryPatchSchema>;

export function isDeliveryId(value: string): boolean {
  return DELIVERY_ID_PATTERN.test(value);
}

/** Random bytes drawn 4 KiB at a time: one call per id costs more than the rest of storing it. */
let pool = Buffer.alloc(0);
let poolAt = 0;

/** `msg_` + time (base 36, sorts roughly by creation) + 64 random bits. */
export function newDeliveryId(now: number): string {
  if (poolAt + 8 > pool.length) {
    pool = randomBytes(4096);
    poolAt = 0;
  }
  const random = pool.toString('hex', poolAt, poolAt + 8);
  poolAt += 8;
  return `msg_${Math.max(0, Math.floor(now)).toString(36).padStart(9, '0')}${random}`;
}

/**
 * Events about one chat share a lane (their order matters: a status never overtakes an earlier one,
 * and one chat's receiver trouble holds back only that chat); instance-wide events share another.
 */
export function laneOf(event: GatewayEvent): string {
  switch (event.type) {
    case 'message.received':
    case 'message.sent':
    case 'message.status':
    case 'message.reaction':
    case 'message.edited':
    case 'message.deleted':
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

/** Shape check for a stored delivery; a foreign or hand-edited one is skipped, not trusted. */
export function isDeliveryRecord(v: unknown): v is DeliveryRecord {
  return matches(DeliveryRecordSchema, v) && v.event.type === v.type && v.event.instanceId === v.instanceId;
}

/** A delivery without its event (a copy). */
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

/** The state fields of a delivery (what a `s` line stores). */
export function patchOf(s: DeliveryState): DeliveryPatch {
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

/** Applies a `s` line (or any newer state) to a delivery. */
export function applyPatch(s: DeliveryState, p: DeliveryPatch): void {
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

/** The public view (`webhook deliveries --json`): the state without the event body. */
export type DeliverySummary = Pick<
  DeliveryState,
  'id' | 'createdAt' | 'status' | 'attempts' | 'lastError' | 'lastStatus' | 'nextAttemptAt' | 'deliveredAt' | 'finishedAt' | 'redeliveries'
> & { type: WebhookEventType };

export function summarise(r: DeliveryState): DeliverySummary {
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
