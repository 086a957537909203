/** The five statuses the spec names. */
export const INSTANCE_STATUSES = [
  'initializing',
  'qr_code_generated',
  'connected',
  'disconnected',
  'requires_premium',
] as const;
export type InstanceStatus = (typeof INSTANCE_STATUSES)[number];

/** What a connection itself can be in; `requires_premium` is a plan overlay, never a connection state. */
export type ConnectionStatus = Exclude<InstanceStatus, 'requires_premium'>;

export const WEBHOOK_EVENTS = [
  'message.received',
  'instance.status',
  'qr.updated',
  'conversation.handover',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];

export interface WebhookSettings {
  url: string;
  /** Needed in clear to sign deliveries; the store file is 0600. */
  secret: string | null;
  /** null = every event type. */
  events: WebhookEventType[] | null;
}

/** Cold instance data: changes rarely (create, rotate, grant, webhook set). */
export interface InstanceRecord {
  id: string;
  name: string;
  owner: string;
  sandbox: boolean;
  /** "sha256:<hex>" of the API key; the key itself is never stored. */
  keyHash: string;
  createdAt: string;
  premiumUntil: string | null;
  webhook: WebhookSettings | null;
}

export type MediaType = 'image' | 'video' | 'audio' | 'document';
export type MessageType = 'text' | MediaType | 'other';

/** An inbound message, already mapped from the transport (sandbox or Baileys). */
export interface InboundMessage {
  messageId: string;
  from: string;
  fromName?: string;
  chatId: string;
  isGroup: boolean;
  type: MessageType;
  text?: string;
  caption?: string;
  timestamp: string;
}
