import type { ConnectionStatus, MediaType } from '../domain/types.js';
import type { InboundMessage } from '../schemas/events.js';
import type { InstanceRecord } from '../schemas/instance.js';
import type { AccountEvent, PersonT, PresenceState } from '../schemas/account-events.js';
import type { CallCapabilities, GroupCapabilities, PollKey, PresenceCapabilities } from './account-types.js';
import type { InboundExtra } from '../storage/ports/messages.js';
import type { AccountActions, LabelUpdate } from './contacts-types.js';

/** What every outgoing message has: the chat it goes to and, optionally, the message it quotes. */
interface OutgoingBase {
  /** The message id, chosen by the gateway before the send (newMessageId). */
  id: string;
  /** A chat id: `<digits>@s.whatsapp.net`, `<digits>@lid` or `<id>@g.us`. */
  to: string;
  /** Id of a message in the same chat to quote. */
  replyTo?: string;
}

/** A text; `mentions` are JIDs of people it mentions (they get notified). */
export interface OutgoingText extends OutgoingBase {
  kind: 'text';
  text: string;
  mentions?: string[];
}

/** A media file already on disk (send-media streams uploads to a temp file first). */
export interface OutgoingMedia extends OutgoingBase {
  kind: 'media';
  mediaType: MediaType;
  path: string;
  mimetype: string;
  fileName: string;
  caption?: string;
  /**
   * How it shows: a voice note (PTT, `audio/ogg; codecs=opus`), a sticker (`image/webp`) or a
   * round video note; absent, as its type says (a document is `mediaType: 'document'`).
   */
  as?: MediaPresentation;
}

export type MediaPresentation = 'voice' | 'sticker' | 'video-note';

/** A status (story) post: a text on a coloured background, or media; seen by `audience`. */
export interface OutgoingStatus extends OutgoingBase {
  kind: 'status';
  /** `status@broadcast`. */
  to: string;
  text?: string;
  /** `#RRGGBB` (a text status's background). */
  backgroundColor?: string;
  /** WhatsApp's font index (0 to 9) of a text status. */
  font?: number;
  media?: Pick<OutgoingMedia, 'mediaType' | 'path' | 'mimetype' | 'fileName' | 'caption'>;
  /** Chat ids (phone JIDs) that see it; absent: the account's contacts. */
  audience?: string[];
}

/** A place on the map. */
export interface OutgoingLocation extends OutgoingBase {
  kind: 'location';
  latitude: number;
  longitude: number;
  name?: string;
  address?: string;
}

/** Contact cards (the gateway builds the vCards). */
export interface OutgoingContacts extends OutgoingBase {
  kind: 'contact';
  contacts: Array<{ name: string; phone: string }>;
}

/** A poll; `multiple` lets people pick more than one option. */
export interface OutgoingPoll extends OutgoingBase {
  kind: 'poll';
  question: string;
  options: string[];
  multiple: boolean;
  /** The poll's messageSecret (32 bytes, base64), chosen before the send so it is stored with the poll: votes are encrypted with it. */
  secret?: string;
}

export type Outgoing = OutgoingText | OutgoingMedia | OutgoingLocation | OutgoingContacts | OutgoingPoll | OutgoingStatus;

/** A message an action is about: its chat, id, whether we sent it, and its author in a group. */
export interface MessageRef {
  chatId: string;
  messageId: string;
  fromMe: boolean;
  /** The author's JID, for a message someone else wrote in a group. */
  participant?: string;
}

export interface NumberCheck {
  phone: string;
  exists: boolean;
  /** The chat to write to, when it exists. */
  chatId: string | null;
}

export interface GroupSummary {
  chatId: string;
  subject: string;
  size: number;
}

export interface GroupInfo {
  chatId: string;
  subject: string;
  description?: string;
  participants: Array<{ jid: string; phone?: string; admin: boolean }>;
  /** Only admins may write. */
  announce?: boolean;
  /** Only admins may change the group info. */
  locked?: boolean;
}

/** An outgoing message before the gateway gave it its id. */
export type OutgoingDraft = Outgoing extends infer T ? (T extends Outgoing ? Omit<T, 'id'> : never) : never;

export type LogoutOutcome = 'logged-out' | 'not-paired' | 'unreachable';

export interface StatusChange {
  from: ConnectionStatus;
  to: ConnectionStatus;
  /** Why, in a few words ("logged out", "scanned", "connection lost (428)"). */
  reason?: string;
  /**
   * On a change to `disconnected`, what the connection does next: `retrying` (it tries again by
   * itself; reported at every retry although the status stays `disconnected`), `gave-up` (it
   * stopped trying on its own until start(); reported even when the status stays the same) or
   * `stopped` (stopped, logged out or deleted). Absent: unknown.
   */
  next?: 'retrying' | 'gave-up' | 'stopped';
  /** Set when WhatsApp could not be reached at all (DNS, refused, TLS): the cause, e.g. `getaddrinfo ENOTFOUND web.whatsapp.com`. */
  unreachable?: string;
}

/**
 * What a connection reports to the daemon. `onMessage` resolves only once the message is durably
 * stored (outbox), so a connection must not acknowledge a message upstream before it resolves.
 * Implementations guard every call: a throwing hook must never crash the connection.
 */
export interface ConnectionHooks {
  onStatus(change: StatusChange): void;
  onQr(qr: string): void;
  /** A received message, with its media to fetch when it has some (and a poll's secret, to decrypt its votes). */
  onMessage(message: InboundMessage, media?: InboundMedia, extra?: InboundExtra): Promise<void>;
  /** Something happened to a message: a receipt, or the other side reacted, edited or deleted. */
  onUpdate(update: MessageUpdate): Promise<void>;
  /** Something happened around the account: groups, calls, presence (published as the event it is). */
  onEvent?(event: AccountEvent): Promise<void>;
  /** What decrypts the votes on a poll the gateway kept (sent or received); null when it is not kept. */
  pollOf?(messageId: string): Promise<PollKey | null>;
  /** A label (business accounts) was edited, or put on or taken off a chat. */
  onLabel?(update: LabelUpdate): Promise<void>;
}

/** The media of a received message; the daemon downloads it when the message arrives. */
export interface InboundMedia {
  mimetype: string;
  fileName?: string;
  /** The size the sender announced (WhatsApp's `fileLength`): a file over the limit is never fetched. */
  declaredSize?: number;
  /** What it is: `voice` (a voice note), `sticker`, `video-note`, or the plain type. */
  kind?: InboundMediaKind;
  download(): Promise<Uint8Array>;
}

export type InboundMediaKind = 'image' | 'video' | 'audio' | 'document' | 'voice' | 'sticker' | 'video-note';

/** Who did something to a message (for reactions, edits and deletes from the other side). */
interface UpdateBase {
  messageId: string;
  chatId: string;
  /** ISO time WhatsApp gave, else when the gateway saw it. */
  timestamp: string;
}

export type MessageUpdate =
  | (UpdateBase & { kind: 'status'; status: 'sent' | 'delivered' | 'read' | 'played' | 'failed'; error?: string })
  | (UpdateBase & { kind: 'reaction'; sender: string; from: string | null; emoji: string })
  | (UpdateBase & { kind: 'edit'; sender: string; from: string | null; text: string })
  | (UpdateBase & { kind: 'delete'; sender: string; from: string | null })
  /** A vote on a poll (`messageId` is the poll's): the option texts the voter picked now. */
  | (UpdateBase & { kind: 'vote'; voter: PersonT; selected: string[] });

/**
 * One WhatsApp connection for one instance. Two implementations: Baileys (`baileys.ts`) and the
 * in-process sandbox (`sandbox.ts`); the HTTP layer cannot tell them apart.
 */
export interface Connection extends GroupCapabilities, CallCapabilities, PresenceCapabilities, AccountActions {
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
  /**
   * Logs the device out of WhatsApp and removes its credentials. A connection that is not live
   * connects with its stored credentials first, for up to `timeoutMs`; WhatsApp being unreachable
   * is reported, and the credentials are removed anyway.
   */
  logout(options?: { timeoutMs?: number }): Promise<LogoutOutcome>;
  /** Sends now; rejects with CONNECTION_NOT_READY unless connected. Pacing is the caller's. */
  send(message: Outgoing): Promise<{ messageId: string }>;
  /** Shows "typing..." (or stops it) in a chat before a message; best effort. */
  sendPresence?(to: string, state: 'composing' | 'paused'): Promise<void>;
  /** Pairing by code instead of QR; resolves with the 8-character code. */
  requestPairingCode?(phone: string): Promise<string>;
  /** Reacts to a message ("" removes our reaction). */
  react(target: MessageRef, emoji: string): Promise<void>;
  /** Changes the text of a message we sent. */
  edit(target: MessageRef, text: string): Promise<void>;
  /** Deletes a message for everyone. */
  remove(target: MessageRef): Promise<void>;
  /** Marks messages of a chat read (the sender sees the blue ticks). */
  markRead(targets: MessageRef[]): Promise<void>;
  /**
   * What the account shows: `typing`, `recording` (a voice note) or `paused` in a chat;
   * `available` / `unavailable` (online or not) to everyone who follows its presence.
   */
  presence(chatId: string, state: PresenceState): Promise<void>;
  /** Which numbers have WhatsApp. */
  checkNumbers(phones: string[]): Promise<NumberCheck[]>;
  /** The groups the account is in. */
  groups(): Promise<GroupSummary[]>;
  /** One group's subject, description and participants; null when unknown. */
  group(chatId: string): Promise<GroupInfo | null>;
}

export interface ConnectionFactory {
  (record: InstanceRecord, hooks: ConnectionHooks): Connection;
  /** Ends what the factory runs besides its connections (session threads), once every connection has stopped. */
  close?: () => Promise<void>;
  /** Its session threads, when it runs connections on threads (connection/threads/). */
  threads?: () => SessionThreadStats;
}

export interface SessionThreadStats {
  /** Threads running now. */
  running: number;
  /** Threads that stopped unexpectedly and were replaced, since the daemon started. */
  replaced: number;
  /** Connections on each thread, by thread index. */
  connections: number[];
}

/**
 * A free action on an instance's live connection (reaction, edit, delete, read mark, presence, a
 * lookup): 503 CONNECTION_NOT_READY unless connected; `paced` ones wait their turn in the anti-ban
 * queue. The send service provides it.
 */
export interface ConnectionActions {
  act<T>(instanceId: string, run: (connection: Connection) => Promise<T>, options: { paced: boolean }): Promise<T>;
}
