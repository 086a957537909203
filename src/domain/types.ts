/**
 * The domain's own types, from its vocabularies (domain/vocabulary.ts). Shapes that cross a
 * boundary (stored, sent, received) are schemas: their types come from src/schemas/.
 */
import { EVENT_TYPES, INSTANCE_STATUSES, MESSAGE_STATUSES, MESSAGE_TYPES } from './vocabulary.js';

export { INSTANCE_STATUSES, MESSAGE_STATUSES, EVENT_TYPES };

export type EventType = (typeof EVENT_TYPES)[number];
export type InstanceStatus = (typeof INSTANCE_STATUSES)[number];

/** What a connection itself can be in; `requires_premium` is a plan overlay, never a connection state. */
export type ConnectionStatus = Exclude<InstanceStatus, 'requires_premium'>;

/** Kept for readers of the old name: every event type is a webhook event type. */
export type WebhookEventType = EventType;
export const WEBHOOK_EVENTS = EVENT_TYPES;

export type MediaType = 'image' | 'video' | 'audio' | 'document';
export type MessageType = (typeof MESSAGE_TYPES)[number];
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];
