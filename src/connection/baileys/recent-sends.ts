import type { proto, WAMessageKey } from '@whiskeysockets/baileys';
import { BoundedMap } from '../../domain/bounded-map.js';

/**
 * Messages this instance sent recently, by message id. Baileys asks for them through
 * `getMessage` when a recipient's device could not decrypt a message and requests a retry after
 * Baileys' own short-lived cache has dropped it; without an answer the recipient keeps seeing
 * "waiting for this message". Memory only: a retry for a message sent before a restart is lost,
 * which is the same trade-off WhatsApp Web makes for a closed tab.
 */
export class RecentSends {
  private readonly messages: BoundedMap<string, proto.IMessage>;

  constructor(capacity = 2000) {
    this.messages = new BoundedMap(capacity);
  }

  remember(id: string | null | undefined, message: proto.IMessage | null | undefined): void {
    if (!id || !message) return;
    this.messages.set(id, message);
  }

  /** Shaped as Baileys' `getMessage` socket option. */
  lookup(key: WAMessageKey): proto.IMessage | undefined {
    return key.id ? this.messages.get(key.id) : undefined;
  }

  get size(): number {
    return this.messages.size;
  }
}

/** What a reply needs to quote a message: its content, whether we sent it, and its author in a group. */
export interface Quotable {
  message: proto.IMessage;
  fromMe: boolean;
  /** The author's JID as the group addresses it (a LID in LID groups). */
  participant?: string;
}

/**
 * Messages recently sent and received, by id, for quoting them in replies: WhatsApp apps show the
 * quote from the `quotedMessage` the reply carries and find the original by id and author
 * (`participant`), so both must be the real ones. Memory only: a reply to a message from before a
 * restart quotes it by id with an empty body, and without its author in a group.
 */
export class RecentQuotables {
  private readonly messages: BoundedMap<string, Quotable>;

  constructor(capacity = 2000) {
    this.messages = new BoundedMap(capacity);
  }

  remember(id: string | null | undefined, entry: { message: proto.IMessage | null | undefined; fromMe: boolean; participant?: string | null | undefined }): void {
    if (!id || !entry.message) return;
    this.messages.set(id, { message: entry.message, fromMe: entry.fromMe, ...(entry.participant ? { participant: entry.participant } : {}) });
  }

  lookup(id: string): Quotable | undefined {
    return this.messages.get(id);
  }
}
