import type { InboundMessage, InstanceStatus, WebhookEventType } from '../domain/types.js';

interface EventBase<T extends WebhookEventType, D> {
  type: T;
  instanceId: string;
  /** ISO time the gateway saw the event. */
  timestamp: string;
  data: D;
}

export type MessageReceivedEvent = EventBase<'message.received', InboundMessage>;
export type InstanceStatusEvent = EventBase<'instance.status', { from: InstanceStatus; to: InstanceStatus; reason: string | null }>;
export type QrUpdatedEvent = EventBase<'qr.updated', { qr: string }>;
export type HandoverEvent = EventBase<
  'conversation.handover',
  {
    chatId: string;
    phone: string;
    flow: string;
    node: string;
    reason: string;
    /** The customer's push name, when known. */
    fromName?: string;
    /** The inbound text that led to the handover. */
    text?: string;
    /** When the bot takes the chat back unless released earlier (ISO). */
    expiresAt?: string;
  }
>;

/** Everything the gateway tells integrators about; each type is a webhook event. */
export type GatewayEvent = MessageReceivedEvent | InstanceStatusEvent | QrUpdatedEvent | HandoverEvent;

/**
 * A consumer of events (webhook outbox, chatbot flows, ...). `handle` resolves once the consumer
 * has made the event durable enough for its own guarantees; the publisher awaits every consumer
 * before acknowledging the event upstream.
 */
export interface EventConsumer {
  readonly name: string;
  handle(event: GatewayEvent): Promise<void>;
}
