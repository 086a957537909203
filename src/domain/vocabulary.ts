/**
 * The gateway's fixed vocabularies: the names every layer shares. Schemas (src/schemas/) build
 * their enums from these, so the domain itself imports nothing.
 */

/** Every event type the gateway tells integrators about (webhooks and live events). */
export const EVENT_TYPES = [
  'message.received',
  'message.sent',
  'message.status',
  'message.reaction',
  'message.edited',
  'message.deleted',
  'instance.status',
  'qr.updated',
  'conversation.handover',
  'label.updated',
  'webhook.test',
  'group.joined',
  'group.updated',
  'group.participants',
  'call.received',
  'presence.updated',
  'poll.vote',
] as const;

export const INSTANCE_STATUSES = ['initializing', 'qr_code_generated', 'connected', 'disconnected', 'requires_premium'] as const;

export const MESSAGE_TYPES = ['text', 'image', 'video', 'audio', 'document', 'sticker', 'location', 'contact', 'poll', 'other'] as const;

export const MESSAGE_STATUSES = ['pending', 'sent', 'delivered', 'read', 'played', 'failed'] as const;
