import type { Logger } from 'pino';
import type { InboundMedia, MessageUpdate, Outgoing } from '../connection/types.js';
import type { Clock } from '../domain/clock.js';
import { errorMessage } from '../domain/errors.js';
import { phoneOfChat } from '../domain/phone.js';
import type { MessageType } from '../domain/types.js';
import type { InboundMessage } from '../schemas/events.js';
import type { EventBus } from '../events/bus.js';
import type { MediaRepository } from '../storage/ports/media.js';
import type { InboundExtra, StoredMessage } from '../storage/ports/messages.js';
import type { MessageRepository } from '../storage/ports/messages.js';
import type { PollKey } from '../connection/account-types.js';
import { vcard } from '../domain/vcard.js';

export interface MessageHubDeps {
  store: MessageRepository;
  media: MediaRepository;
  bus: EventBus;
  clock: Clock;
  logger: Logger;
  /** Largest inbound file downloaded (`media.maxBytes`; bigger ones are announced without a url). */
  maxMediaBytes: number;
  downloadTimeoutMs?: number;
}

/** The route that serves a message's media. */
export function mediaUrl(instanceId: string, messageId: string): string {
  return `/api/${instanceId}/messages/${encodeURIComponent(messageId)}/media`;
}

function outgoingType(m: Outgoing): MessageType {
  if (m.kind === 'media') return m.as === 'sticker' ? 'sticker' : m.mediaType;
  if (m.kind === 'status') return m.media ? m.media.mediaType : 'text';
  return m.kind;
}

/** What the store keeps of an outgoing message's content. */
function outgoingContent(m: Outgoing): Partial<StoredMessage> {
  switch (m.kind) {
    case 'text':
      return { text: m.text, ...(m.mentions ? { mentions: m.mentions } : {}) };
    case 'media':
      return m.caption !== undefined ? { caption: m.caption } : {};
    case 'location':
      return { location: { latitude: m.latitude, longitude: m.longitude, ...(m.name !== undefined ? { name: m.name } : {}), ...(m.address !== undefined ? { address: m.address } : {}) } };
    case 'contact':
      return { contacts: m.contacts.map((c) => ({ name: c.name, phone: c.phone, vcard: vcard(c.name, c.phone) })) };
    case 'poll':
      return { poll: { question: m.question, options: m.options, multiple: m.multiple }, ...(m.secret !== undefined ? { pollSecret: m.secret } : {}) };
    case 'status':
      if (m.media) return m.media.caption !== undefined ? { caption: m.media.caption } : {};
      return m.text !== undefined ? { text: m.text } : {};
  }
}

async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer in ${ms / 1000} s`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** A message the account sent from elsewhere, as history keeps an outgoing one. */
function sentElsewhere(m: InboundMessage, media: StoredMessage['media'], now: number): StoredMessage {
  const ts = Date.parse(m.timestamp);
  return {
    messageId: m.messageId,
    chatId: m.chatId,
    fromMe: true,
    sender: m.sender,
    from: m.from,
    type: m.type,
    status: 'sent',
    ...(m.text !== undefined ? { text: m.text } : {}),
    ...(m.caption !== undefined ? { caption: m.caption } : {}),
    ...(m.quoted ? { quoted: m.quoted } : {}),
    ...(m.mentions ? { mentions: m.mentions } : {}),
    ...(media ? { media } : {}),
    ...(m.location ? { location: m.location } : {}),
    ...(m.contacts ? { contacts: m.contacts } : {}),
    ...(m.poll ? { poll: m.poll } : {}),
    timestamp: Number.isNaN(ts) ? now : ts,
    updatedAt: now,
  };
}

/**
 * Messages as facts: what connections report (received messages, receipts, reactions, edits,
 * deletes) and what was sent is stored in the message store, then published as events, in that
 * order, each durable before the connection acknowledges it.
 */
export class MessageHub {
  constructor(private readonly deps: MessageHubDeps) {}

  private nowMs = NaN;
  private nowText = '';

  /** The clock as an ISO string, formatted once per millisecond (a send asks twice). */
  private now(): string {
    const ms = this.deps.clock.now();
    if (ms !== this.nowMs) {
      this.nowMs = ms;
      this.nowText = new Date(ms).toISOString();
    }
    return this.nowText;
  }

  /**
   * A received message: its media downloaded and kept, stored, published. A message the account
   * wrote from its phone or another linked device (`fromMe`) is a `message.sent` event and enters
   * history as an outgoing message, `sent`.
   */
  async received(instanceId: string, message: InboundMessage, media: InboundMedia | undefined, extra?: InboundExtra): Promise<void> {
    let event = message;
    let stored: { mimetype: string; size: number; fileName?: string } | undefined;
    if (media) {
      let url: string | null = null;
      let size = media.declaredSize ?? 0;
      const max = this.deps.maxMediaBytes;
      if (size > max) {
        // Never fetched: the download would hold the whole file in memory first.
        this.deps.logger.info({ instanceId, messageId: message.messageId, size, max }, 'received media over media.maxBytes: announced without a url, not downloaded');
      } else {
        try {
          const bytes = await withTimeout(media.download(), this.deps.downloadTimeoutMs ?? 60_000);
          size = bytes.length;
          if (size > max) {
            this.deps.logger.info({ instanceId, messageId: message.messageId, size, max }, 'received media over media.maxBytes (more than announced): not kept');
          } else if (await this.deps.media.put(instanceId, message.messageId, { bytes }, this.deps.clock.now())) {
            url = mediaUrl(instanceId, message.messageId);
          }
        } catch (err) {
          this.deps.logger.warn({ instanceId, messageId: message.messageId, err: errorMessage(err) }, 'could not download the media of a received message; announced without a url');
        }
      }
      stored = { mimetype: media.mimetype, size, ...(media.fileName !== undefined ? { fileName: media.fileName } : {}) };
      event = { ...message, media: { ...stored, url, ...(media.kind !== undefined ? { kind: media.kind } : {}) } };
    }
    if (message.fromMe === true) {
      await Promise.all([this.deps.store.recordOutgoing(instanceId, sentElsewhere(event, stored, this.deps.clock.now()), true), this.deps.bus.publish({ type: 'message.sent', instanceId, timestamp: this.now(), data: event })]);
      return;
    }
    await Promise.all([
      this.deps.store.recordInbound(instanceId, event, stored, extra),
      this.deps.bus.publish({ type: 'message.received', instanceId, timestamp: this.now(), data: event }),
    ]);
  }

  /**
   * A message about to be sent (possibly waiting in the pacing queue): stored as `pending` with its
   * media, before it leaves, so a receipt can never arrive for a message the store does not know.
   */
  async pending(instanceId: string, message: Outgoing, messageId: string, options: { mayWait?: boolean } = {}): Promise<void> {
    const now = this.deps.clock.now();
    let media: { mimetype: string; size: number; fileName?: string } | undefined;
    if (message.kind === 'media') {
      try {
        if (await this.deps.media.put(instanceId, messageId, { path: message.path }, now)) {
          const kept = await this.deps.media.get(instanceId, messageId);
          media = { mimetype: message.mimetype, size: kept?.size ?? 0, fileName: message.fileName };
        }
      } catch (err) {
        this.deps.logger.warn({ instanceId, messageId, err: errorMessage(err) }, 'could not keep a copy of sent media');
      }
    }
    await this.deps.store.recordOutgoing(instanceId, {
      messageId,
      chatId: message.to,
      fromMe: true,
      sender: null,
      from: null,
      type: outgoingType(message),
      status: 'pending',
      ...outgoingContent(message),
      ...(message.replyTo !== undefined ? { quoted: { messageId: message.replyTo } } : {}),
      ...(media ? { media } : {}),
      timestamp: now,
      updatedAt: now,
    }, false, options);
  }

  /** The message was handed to WhatsApp (`sent`) or could not be (`failed`): stored, published. */
  async settled(instanceId: string, messageId: string, status: 'sent' | 'failed', error?: string, options: { durable?: boolean } = {}): Promise<void> {
    // Not waited on disk by default: a debited send's debit is what must be durable before its
    // 200, and a `sent` lost to a crash is moved past by the next receipt (statuses only move
    // forward). A send with nothing to debit asks for `durable` (see SendService).
    await this.update(instanceId, { kind: 'status', messageId, chatId: '', status, timestamp: this.now(), ...(error !== undefined ? { error } : {}) }, options.durable === true);
  }

  /** A receipt, or what the other side did to a message. */
  async update(instanceId: string, u: MessageUpdate, durable = true): Promise<void> {
    const { store, bus } = this.deps;
    const timestamp = this.now();
    switch (u.kind) {
      case 'status': {
        const change = await store.setStatus(instanceId, u.messageId, u.status, u.error, durable);
        // Unknown (not sent through the gateway, or long gone) or not a step forward: no event.
        if (!change) return;
        await bus.publish({
          type: 'message.status',
          instanceId,
          timestamp,
          data: { messageId: u.messageId, chatId: change.chatId, ...phoneOfChat(change.chatId), status: u.status, timestamp: u.timestamp, ...(u.error !== undefined ? { error: u.error } : {}) },
        });
        return;
      }
      case 'reaction':
        await store.reaction(instanceId, u.messageId, u.sender, u.emoji);
        await bus.publish({ type: 'message.reaction', instanceId, timestamp, data: { messageId: u.messageId, chatId: u.chatId, sender: u.sender, from: u.from, emoji: u.emoji, timestamp: u.timestamp } });
        return;
      case 'edit':
        await store.edited(instanceId, u.messageId, u.text);
        await bus.publish({ type: 'message.edited', instanceId, timestamp, data: { messageId: u.messageId, chatId: u.chatId, sender: u.sender, from: u.from, text: u.text, timestamp: u.timestamp } });
        return;
      case 'delete':
        await store.deleted(instanceId, u.messageId);
        await bus.publish({ type: 'message.deleted', instanceId, timestamp, data: { messageId: u.messageId, chatId: u.chatId, sender: u.sender, from: u.from, timestamp: u.timestamp } });
        return;
      case 'vote':
        await store.pollVote(instanceId, u.messageId, u.voter.jid, { ...(u.voter.phone !== undefined ? { phone: u.voter.phone } : {}), selected: u.selected, at: Date.parse(u.timestamp) || this.deps.clock.now() });
        await bus.publish({ type: 'poll.vote', instanceId, timestamp, data: { chatId: u.chatId, pollMessageId: u.messageId, voter: u.voter, selected: u.selected, timestamp: u.timestamp } });
        return;
    }
  }

  /** What decrypts the votes on a poll kept in history (its secret and options), or null. */
  async pollKey(instanceId: string, messageId: string): Promise<PollKey | null> {
    const m = await this.deps.store.get(instanceId, messageId);
    if (!m?.poll || m.pollSecret === undefined) return null;
    return { secret: m.pollSecret, options: m.poll.options, fromMe: m.fromMe, sender: m.sender };
  }
}
