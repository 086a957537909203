import type { InboundMessage } from '../../schemas/events.js';
import type { MessageStatus, MessageType } from '../../domain/types.js';

/** A message as history keeps it (in or out), with what happened to it since merged in. */
export interface StoredMessage {
  messageId: string;
  chatId: string;
  fromMe: boolean;
  sender: string | null;
  from: string | null;
  fromName?: string;
  type: MessageType;
  status: MessageStatus;
  text?: string;
  caption?: string;
  quoted?: { messageId: string };
  mentions?: string[];
  media?: { mimetype: string; size: number; fileName?: string };
  location?: InboundMessage['location'];
  contacts?: InboundMessage['contacts'];
  poll?: InboundMessage['poll'];
  /** A poll's messageSecret (base64): its votes are encrypted with it. Never shown. */
  pollSecret?: string;
  /** A poll's votes: each voter's (by JID) latest choice. */
  votes?: Record<string, StoredVote>;
  edited?: boolean;
  deleted?: boolean;
  reactions?: Record<string, string>;
  error?: string;
  /** Epoch ms. */
  timestamp: number;
  updatedAt: number;
}

/** One voter's latest choice on a poll. */
export interface StoredVote {
  phone?: string;
  /** Option texts; [] when the voter withdrew their vote. */
  selected: string[];
  /** Epoch ms. */
  at: number;
}

/** What a received message brings that its event does not show. */
export interface InboundExtra {
  /** A poll's messageSecret (base64), to decrypt its votes. */
  pollSecret?: string;
}

/** A chat as the chats list shows it. */
export interface ChatSummary {
  chatId: string;
  name?: string;
  isGroup: boolean;
  lastMessageAt: number;
  unread: number;
}

/** A change of an outgoing message's status, when it moved forward. */
export interface StatusChange {
  messageId: string;
  chatId: string;
  from: MessageStatus;
  to: MessageStatus;
}

/** What a chat page shows. */
export interface ChatPage {
  messages: StoredMessage[];
  nextBefore: string | null;
}

/**
 * Messages in and out, per instance: the lifecycle of every outgoing message (pending -> sent ->
 * delivered -> read -> played, or failed; never backwards) and the conversation history, bounded
 * by `history.days` and `history.maxMessagesPerChat`. Without history only the lifecycle (ids,
 * chats, statuses) is kept, not what was said. A write that cannot be stored rejects with
 * STORAGE_UNAVAILABLE; `durable: false` writes may be lost in a crash (never reordered).
 */
export interface MessageRepository {
  readonly historyEnabled: boolean;
  /**
   * An outgoing message (`pending` before it leaves; its status follows with setStatus).
   * `mayWait`: the send stored something just before (its credit hold), so the store was reachable
   * and this node may write for the instance: a lazy record may then be kept back in the process
   * for a few ms and written with its status (it may be lost if the store fails meanwhile, as a
   * lazy write may be in a crash). Without it the record is stored before this resolves.
   */
  recordOutgoing(instanceId: string, m: StoredMessage, durable: boolean, options?: { mayWait?: boolean }): Promise<void>;
  /** A received message, stored durably before the connection acknowledges it. */
  recordInbound(instanceId: string, m: InboundMessage, media: StoredMessage['media'], extra?: InboundExtra): Promise<void>;
  /** A status reported for a message; the change when it moved forward, else null. */
  setStatus(instanceId: string, messageId: string, status: MessageStatus, error?: string, durable?: boolean): Promise<StatusChange | null>;
  /** False when the message is not kept. */
  edited(instanceId: string, messageId: string, text: string): Promise<boolean>;
  deleted(instanceId: string, messageId: string): Promise<boolean>;
  reaction(instanceId: string, messageId: string, sender: string, emoji: string): Promise<void>;
  /**
   * A vote on a poll: the voter's (`voter`, a JID) latest choice replaces their earlier one. False
   * when the poll is not kept (unknown, expired, or history is off: votes are what was said).
   */
  pollVote(instanceId: string, messageId: string, voter: string, vote: StoredVote): Promise<boolean>;
  /** The chat was read on our side: its unread count goes to 0. */
  markRead(instanceId: string, chatId: string): Promise<void>;
  /** The account deleted the chat: its messages (and their media) go; how many went. Durable. */
  removeChat(instanceId: string, chatId: string): Promise<number>;
  get(instanceId: string, messageId: string): Promise<StoredMessage | null>;
  /** Where a message is (its chat), if it is kept. */
  chatOf(instanceId: string, messageId: string): Promise<string | null>;
  /** Chats, newest first. */
  chats(instanceId: string): Promise<ChatSummary[]>;
  /**
   * Kept messages whose text, caption or sender's name contains `text` (case-insensitive), newest
   * first, `limit` at most; at most SEARCH_SCAN of the newest messages are looked at.
   */
  search(instanceId: string, text: string, limit: number): Promise<StoredMessage[]>;
  /** A chat's messages, newest first, `limit` at most, older than `before` if given; null for an unknown chat. */
  chatMessages(instanceId: string, chatId: string, limit: number, before?: string): Promise<ChatPage | null>;
  /**
   * Writes this process keeps back (see recordOutgoing's `mayWait`, and writes batched with them)
   * go now; resolves once they are stored (or failed). Called before a node gives an instance up,
   * while it still holds the instance's lease (`instanceId`), and at stop (all of them).
   */
  flush(instanceId?: string): Promise<void>;
  /** Starts the periodic sweep of what expired. */
  start(): void;
  stop(): Promise<void>;
  removeInstance(instanceId: string): Promise<void>;
  /**
   * This process took the instance over (a lease, on an engine several processes share): what it
   * remembered of the instance's stored rows is read again (another process wrote them meanwhile).
   */
  adopted?(instanceId: string): void;
}

/** The newest messages of an instance a search looks at (the files engine reads each from disk). */
export const SEARCH_SCAN = 20_000;

/** Whether a stored message matches a search (`needle` already lower-cased). */
export function messageMatches(m: StoredMessage, needle: string): boolean {
  return [m.text, m.caption, m.fromName, m.media?.fileName].some((v) => typeof v === 'string' && v.toLowerCase().includes(needle));
}
