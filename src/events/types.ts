import type { Static } from 'typebox';
import type { EVENT_DATA, EventType } from '../schemas/events.js';

export type EventData = { [K in EventType]: Static<(typeof EVENT_DATA)[K]> };

/** One event: what integrators get as a webhook body and as a live event. */
export type GatewayEvent = {
  [K in EventType]: {
    type: K;
    instanceId: string;
    /** ISO time the gateway saw the event. */
    timestamp: string;
    data: EventData[K];
  };
}[EventType];

export type EventOf<K extends EventType> = Extract<GatewayEvent, { type: K }>;
export type MessageReceivedEvent = EventOf<'message.received'>;
export type InstanceStatusEvent = EventOf<'instance.status'>;
export type QrUpdatedEvent = EventOf<'qr.updated'>;
export type HandoverEvent = EventOf<'conversation.handover'>;

/**
 * A consumer of events (webhook outbox, chatbot flows, live events...). `handle` resolves once the
 * consumer has made the event durable enough for its own guarantees; the publisher awaits every
 * consumer before acknowledging the event upstream.
 */
export interface EventConsumer {
  readonly name: string;
  handle(event: GatewayEvent): Promise<void>;
}
