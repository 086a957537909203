import type { ConnectionStatus, InboundMessage, InstanceRecord, MediaType } from '../domain/types.js';

/** A text to send; `phone` is E.164 ("+15551234567"). */
export interface OutgoingText {
  kind: 'text';
  phone: string;
  text: string;
}

/** A media file already on disk (send-media streams uploads to a temp file first). */
export interface OutgoingMedia {
  kind: 'media';
  phone: string;
  mediaType: MediaType;
  path: string;
  mimetype: string;
  fileName: string;
  caption?: string;
}

export type Outgoing = OutgoingText | OutgoingMedia;

export interface StatusChange {
  from: ConnectionStatus;
  to: ConnectionStatus;
  /** Why, in a few words ("logged out", "scanned", "connection lost (428)"). */
  reason?: string;
}

/**
 * What a connection reports to the daemon. `onMessage` resolves only once the message is durably
 * stored (outbox), so a connection must not acknowledge a message upstream before it resolves.
 * Implementations guard every call: a throwing hook must never crash the connection.
 */
export interface ConnectionHooks {
  onStatus(change: StatusChange): void;
  onQr(qr: string): void;
  onMessage(message: InboundMessage): Promise<void>;
}

/**
 * One WhatsApp connection for one instance. Two implementations: Baileys (`baileys.ts`) and the
 * in-process sandbox (`sandbox.ts`); the HTTP layer cannot tell them apart.
 */
export interface Connection {
  readonly instanceId: string;
  readonly status: ConnectionStatus;
  /** The current raw QR payload while status is `qr_code_generated`, else null. */
  readonly qr: string | null;
  /** The reason for the last status change, if any (shown by `status`). */
  readonly reason: string | null;
  /** Starts connecting; idempotent. Never opens a second live socket. */
  start(): void;
  /** Closes the connection and keeps its credentials. */
  stop(): Promise<void>;
  /** Logs the device out (best effort) and removes its credentials. */
  logout(): Promise<void>;
  /** Sends now; rejects with CONNECTION_NOT_READY unless connected. Pacing is the caller's. */
  send(message: Outgoing): Promise<{ messageId: string }>;
  /** Shows "typing..." (or stops it) in a chat before a message; best effort. */
  sendPresence?(phone: string, state: 'composing' | 'paused'): Promise<void>;
  /** Pairing by code instead of QR (Baileys only); resolves with the 8-character code. */
  requestPairingCode?(phone: string): Promise<string>;
}

export type ConnectionFactory = (record: InstanceRecord, hooks: ConnectionHooks) => Connection;
