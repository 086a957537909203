import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../../../config/schema.js';
import { DAY_MS, type Clock } from '../../../domain/clock.js';
import { GatewayError, errorMessage, storageError } from '../../../domain/errors.js';
import type { TimerHandle, Timers } from '../../../domain/timers.js';
import type { MessageStatus } from '../../../domain/types.js';
import type { InboundMessage } from '../../../schemas/events.js';
import { ensureDir } from '../../../fs/atomic-write.js';
import type { WriteGuard } from '../../../fs/write-guard.js';
import { isInstanceId } from '../paths.js';
import { InstanceMessages, type Chat, type StatusChange } from './instance-messages.js';
import type { MediaRepository } from '../../ports/media.js';
import { SEARCH_SCAN, messageMatches, type InboundExtra, type MessageRepository, type StoredVote } from '../../ports/messages.js';
import type { JournalRecord, StoredMessage } from './records.js';

export type { StatusChange } from './instance-messages.js';

export interface MessageStoreOptions {
  root: string;
  /** The data dir lock, checked before each write. */
  guard: WriteGuard;
  history: GatewayConfig['history'];
  media: MediaRepository;
  clock: Clock;
  timers: Timers;
  logger: Logger;
  /** Instances whose index is kept in memory at once; the least recently used are closed. */
  maxOpen?: number;
}

/** What a chat page shows. */
export interface ChatPage {
  messages: StoredMessage[];
  nextBefore: string | null;
}

/**
 * Messages in and out, per instance: the lifecycle of every outgoing message (pending -> sent ->
 * delivered -> read -> played, or failed; never backwards) and the conversation history. Bounded
 * by `history.days` and `history.maxMessagesPerChat`; with `history.enabled` false only the
 * lifecycle (ids, chats, statuses) is kept, not what was said.
 */
export class MessageStore implements MessageRepository {
  private readonly open = new Map<string, Promise<InstanceMessages>>();
  /** The instance used last: already the newest in `open`, so its next use skips the reordering. */
  private last: { id: string; im: Promise<InstanceMessages> } | null = null;
  private sweepTimer: TimerHandle | null = null;

  constructor(private readonly options: MessageStoreOptions) {}

  get historyEnabled(): boolean {
    return this.options.history.enabled;
  }

  private file(instanceId: string): string {
    if (!isInstanceId(instanceId)) throw new Error(`not an instance id: ${JSON.stringify(instanceId.slice(0, 60))}`);
    return join(this.options.root, instanceId, 'journal.jsonl');
  }

  private instance(instanceId: string): Promise<InstanceMessages> {
    // A send touches its instance twice (pending, sent), and a busy one again and again: the Map
    // delete and set that keep the order were 12 % of the store's CPU in a profile of sends.
    const last = this.last;
    if (last !== null && last.id === instanceId && this.open.get(instanceId) === last.im) return last.im;
    let im = this.open.get(instanceId);
    if (im) {
      // Most recently used last.
      this.open.delete(instanceId);
      this.open.set(instanceId, im);
      this.last = { id: instanceId, im };
      return im;
    }
    const { history } = this.options;
    im = (async () => {
      await ensureDir(join(this.options.root, instanceId));
      return InstanceMessages.open(
        this.file(instanceId),
        { maxPerChat: history.maxMessagesPerChat, keepMs: history.days * DAY_MS },
        (id: string, hasMedia: boolean) => {
          if (hasMedia) void this.options.media.remove(instanceId, id);
        },
        this.options.clock.now(),
        this.options.guard,
      );
    })();
    im.catch(() => this.open.delete(instanceId));
    this.open.set(instanceId, im);
    this.last = { id: instanceId, im };
    const max = this.options.maxOpen ?? 256;
    while (this.open.size > max) {
      const [oldest, p] = this.open.entries().next().value as [string, Promise<InstanceMessages>];
      this.open.delete(oldest);
      void p.then((x) => x.close()).catch(() => undefined);
    }
    return im;
  }

  /**
   * Appends a record. When the write fails (a full disk), the instance's journal is closed and
   * forgotten, so the next access replays what is really on disk; the failure reaches the caller
   * as STORAGE_UNAVAILABLE.
   */
  private async writeTo(instanceId: string, record: JournalRecord, durable: boolean): Promise<StatusChange | null> {
    const p = this.instance(instanceId);
    const im = await p;
    try {
      return await im.write(record, durable);
    } catch (err) {
      if (this.open.get(instanceId) === p) {
        this.open.delete(instanceId);
        void im.close().catch(() => undefined);
      }
      const failure = storageError(err, 'message store');
      throw failure instanceof GatewayError ? failure : new GatewayError('STORAGE_UNAVAILABLE', 'the message store could not be written; nothing was changed', { cause: err });
    }
  }

  /** Without history, only what the lifecycle needs is kept. */
  private trim(m: StoredMessage): StoredMessage {
    if (this.options.history.enabled) return m;
    const { messageId, chatId, fromMe, sender, from, type, status, timestamp, updatedAt } = m;
    return { messageId, chatId, fromMe, sender, from, type, status, timestamp, updatedAt };
  }

  /** An outgoing message (`pending` before it leaves; its status follows with setStatus). */
  /** Nothing is kept back here: each journal writes its lines in order, and close writes what is queued. */
  async flush(_instanceId?: string): Promise<void> {}

  async recordOutgoing(instanceId: string, m: StoredMessage, durable: boolean, _options?: { mayWait?: boolean }): Promise<void> {
    await this.writeTo(instanceId, { k: 'm', ...this.trim(m) }, durable);
  }

  /** A received message, stored durably before the connection acknowledges it. */
  async recordInbound(instanceId: string, m: InboundMessage, media: { mimetype: string; size: number; fileName?: string } | undefined, extra?: InboundExtra): Promise<void> {
    const ts = Date.parse(m.timestamp);
    const stored: StoredMessage = {
      messageId: m.messageId,
      chatId: m.chatId,
      fromMe: false,
      sender: m.sender,
      from: m.from,
      ...(m.fromName !== undefined ? { fromName: m.fromName } : {}),
      type: m.type,
      status: 'delivered',
      ...(m.text !== undefined ? { text: m.text } : {}),
      ...(m.caption !== undefined ? { caption: m.caption } : {}),
      ...(m.quoted ? { quoted: m.quoted } : {}),
      ...(m.mentions ? { mentions: m.mentions } : {}),
      ...(media ? { media } : {}),
      ...(m.location ? { location: m.location } : {}),
      ...(m.contacts ? { contacts: m.contacts } : {}),
      ...(m.poll ? { poll: m.poll } : {}),
      ...(m.poll && extra?.pollSecret !== undefined ? { pollSecret: extra.pollSecret } : {}),
      timestamp: ts,
      updatedAt: this.options.clock.now(),
    };
    await this.writeTo(instanceId, { k: 'm', ...this.trim(stored) }, true);
  }

  /** A status reported for a message; the change when it moved forward, else null. */
  async setStatus(instanceId: string, messageId: string, status: MessageStatus, error?: string, durable = true): Promise<StatusChange | null> {
    return this.writeTo(instanceId, { k: 's', id: messageId, status, at: this.options.clock.now(), ...(error !== undefined ? { error } : {}) }, durable);
  }

  async edited(instanceId: string, messageId: string, text: string): Promise<boolean> {
    const im = await this.instance(instanceId);
    if (!im.entries.has(messageId)) return false;
    await this.writeTo(instanceId, { k: 'e', id: messageId, text: this.options.history.enabled ? text : '', at: this.options.clock.now() }, true);
    return true;
  }

  async deleted(instanceId: string, messageId: string): Promise<boolean> {
    const im = await this.instance(instanceId);
    if (!im.entries.has(messageId)) return false;
    await this.writeTo(instanceId, { k: 'd', id: messageId, at: this.options.clock.now() }, true);
    return true;
  }

  async reaction(instanceId: string, messageId: string, sender: string, emoji: string): Promise<void> {
    await this.writeTo(instanceId, { k: 'r', id: messageId, sender, emoji, at: this.options.clock.now() }, false);
  }

  async pollVote(instanceId: string, messageId: string, voter: string, vote: StoredVote): Promise<boolean> {
    if (!this.options.history.enabled) return false;
    const im = await this.instance(instanceId);
    if (!im.entries.has(messageId)) return false;
    await this.writeTo(instanceId, { k: 'v', id: messageId, voter, ...vote }, true);
    return true;
  }

  /** The chat was read on our side: its unread count goes to 0. */
  async markRead(instanceId: string, chatId: string): Promise<void> {
    await this.writeTo(instanceId, { k: 'read', chat: chatId, at: this.options.clock.now() }, false);
  }

  async removeChat(instanceId: string, chatId: string): Promise<number> {
    const im = await this.instance(instanceId);
    const count = im.chats.get(chatId)?.ids.length ?? 0;
    if (count === 0) return 0;
    await this.writeTo(instanceId, { k: 'clear', chat: chatId, at: this.options.clock.now() }, true);
    return count;
  }

  async get(instanceId: string, messageId: string): Promise<StoredMessage | null> {
    return (await this.instance(instanceId)).message(messageId);
  }

  /** Where a message is (its chat), if it is kept. */
  async chatOf(instanceId: string, messageId: string): Promise<string | null> {
    const { entries } = await this.instance(instanceId);
    const row = entries.row(messageId);
    return row < 0 ? null : entries.chatId(row);
  }

  /** Chats, newest first. */
  async chats(instanceId: string): Promise<Chat[]> {
    return [...(await this.instance(instanceId)).chats.values()].sort((a, b) => b.lastMessageAt - a.lastMessageAt);
  }

  /** Messages matching `text`, newest first (each read from the journal: no index of words is kept). */
  async search(instanceId: string, text: string, limit: number): Promise<StoredMessage[]> {
    if (!this.options.history.enabled) return [];
    const im = await this.instance(instanceId);
    const needle = text.toLowerCase();
    const { entries } = im;
    const rows = [...entries.allRows()].sort((a, b) => entries.timestamp(b) - entries.timestamp(a)).slice(0, SEARCH_SCAN);
    const ids = rows.map((row) => entries.id(row));
    const out: StoredMessage[] = [];
    for (const id of ids) {
      // Checked at each step: a message deleted while earlier ones were read is skipped.
      const row = entries.row(id);
      if (row < 0 || entries.deleted(row)) continue;
      const m = await im.message(id);
      if (m && messageMatches(m, needle)) out.push(m);
      if (out.length >= limit) break;
    }
    return out;
  }

  /** A chat's messages, newest first, `limit` at most, older than `before` if given. */
  async chatMessages(instanceId: string, chatId: string, limit: number, before?: string): Promise<ChatPage | null> {
    const im = await this.instance(instanceId);
    const chat = im.chats.get(chatId);
    if (!chat) return null;
    let end = chat.ids.length;
    if (before !== undefined) {
      const i = chat.ids.indexOf(before);
      end = i < 0 ? 0 : i;
    }
    const ids = chat.ids.slice(Math.max(0, end - limit), end).reverse();
    const messages: StoredMessage[] = [];
    for (const id of ids) {
      const m = await im.message(id);
      if (m) messages.push(m);
    }
    const oldest = ids[ids.length - 1];
    return { messages, nextBefore: end - limit > 0 && oldest !== undefined ? oldest : null };
  }

  /** Rewrites an instance's journal now (it also happens on its own once most of it is stale). */
  async compact(instanceId: string): Promise<void> {
    await (await this.instance(instanceId)).compact();
  }

  /** Daily sweep of expired messages and media. */
  start(): void {
    const sweep = (): void => {
      const now = this.options.clock.now();
      void (async () => {
        for (const p of this.open.values()) (await p.catch(() => null))?.prune(now);
        await this.options.media.sweep(now);
      })().catch((err: unknown) => this.options.logger.error({ err: errorMessage(err) }, 'history sweep failed'));
      this.sweepTimer = this.options.timers.after(DAY_MS / 4, sweep);
    };
    this.sweepTimer = this.options.timers.after(DAY_MS / 4, sweep);
  }

  async stop(): Promise<void> {
    this.sweepTimer?.cancel();
    for (const p of this.open.values()) await (await p.catch(() => null))?.close();
    this.open.clear();
  }

  async removeInstance(instanceId: string): Promise<void> {
    const p = this.open.get(instanceId);
    this.open.delete(instanceId);
    await (await p?.catch(() => null))?.close().catch(() => undefined);
    await rm(join(this.options.root, instanceId), { recursive: true, force: true });
    await this.options.media.removeInstance(instanceId);
  }
}
