/**
 * The domain's types. Shapes that cross a boundary (stored, sent, received) are defined once as
 * schemas in src/schemas/ and their types derived here.
 */
import type { Static } from 'typebox';
import { INSTANCE_STATUSES, MESSAGE_STATUSES, MESSAGE_TYPES, EVENT_TYPES, type EventType, type InboundMessage } from '../schemas/events.js';

export type { InstanceRecord, WebhookSettings, InstancesDoc } from '../schemas/instance.js';
export type { InboundMessage, EventType };
export { INSTANCE_STATUSES, MESSAGE_STATUSES, EVENT_TYPES };

export type InstanceStatus = (typeof INSTANCE_STATUSES)[number];

/** What a connection itself can be in; `requires_premium` is a plan overlay, never a connection state. */
export type ConnectionStatus = Exclude<InstanceStatus, 'requires_premium'>;

/** Kept for readers of the old name: every event type is a webhook event type. */
export type WebhookEventType = EventType;
export const WEBHOOK_EVENTS = EVENT_TYPES;

export type MediaType = 'image' | 'video' | 'audio' | 'document';
export type MessageType = (typeof MESSAGE_TYPES)[number];
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

export type { Static };
