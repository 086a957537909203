import Type from 'typebox';
import { IsoTime, closed } from './common.js';
import { EventTypeSchema } from './instance.js';

export const DeliveryStatusSchema = Type.Enum(['pending', 'delivered', 'failed']);

/** One delivery as `webhook deliveries` shows it: its state, not the event body. */
export const DeliverySummarySchema = closed({
  id: Type.String({ description: 'The webhook-id header of every attempt.' }),
  type: EventTypeSchema,
  createdAt: IsoTime,
  status: DeliveryStatusSchema,
  attempts: Type.Integer({ minimum: 0 }),
  lastError: Type.Union([Type.String(), Type.Null()]),
  lastStatus: Type.Union([Type.Integer(), Type.Null()]),
  nextAttemptAt: Type.Union([IsoTime, Type.Null()]),
  deliveredAt: Type.Union([IsoTime, Type.Null()]),
  finishedAt: Type.Union([IsoTime, Type.Null()]),
  redeliveries: Type.Integer({ minimum: 0 }),
});

export const DeliveriesQuery = closed({
  status: Type.Optional(DeliveryStatusSchema),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
});

export const DeliveriesBody = closed({
  success: Type.Literal(true),
  instanceId: Type.String(),
  counts: closed({ pending: Type.Integer(), delivered: Type.Integer(), failed: Type.Integer() }),
  deliveries: Type.Array(DeliverySummarySchema),
});

export const RedeliverBody = closed({
  success: Type.Literal(true),
  instanceId: Type.String(),
  requeued: Type.Boolean({ description: 'false when it was still pending (nothing to do).' }),
  delivery: DeliverySummarySchema,
});

export const WebhookTestBody = closed({
  success: Type.Literal(true),
  instanceId: Type.String(),
  delivery: DeliverySummarySchema,
});
