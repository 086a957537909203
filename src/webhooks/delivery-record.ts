import { randomBytes } from 'node:crypto';
import type { WebhookEventType } from '../domain/types.js';
import type { GatewayEvent } from '../events/types.js';
import type { DeliveryRecord, DeliveryState } from '../storage/ports/outbox.js';

export { isDeliveryId, type DeliveryPatch, type DeliveryRecord, type DeliveryState, type DeliveryStatus } from '../storage/ports/outbox.js';

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
 * A test event has a lane of its own: it was asked for now, and waits behind nothing.
 */
export function laneOf(event: GatewayEvent, deliveryId: string): string {
  switch (event.type) {
    case 'message.received':
    case 'message.sent':
    case 'message.status':
    case 'message.reaction':
    case 'message.edited':
    case 'message.deleted':
    case 'conversation.handover':
      return `chat:${event.data.chatId}`;
    case 'webhook.test':
      return `test:${deliveryId}`;
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
    lane: laneOf(event, id),
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
