import type { proto, WAMessageKey } from '@whiskeysockets/baileys';
import { BoundedMap } from './lru.js';

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
