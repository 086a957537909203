import type { WAMessage } from '@whiskeysockets/baileys';
import type { Logger } from 'pino';
import type { Clock } from '../../domain/clock.js';
import type { InboundMessage } from '../../domain/types.js';
import { SeenMessages, mapInbound, type LidResolver } from './mapping.js';

/**
 * Hands upserted messages to the daemon one at a time, in arrival order, each once. Baileys fires
 * `messages.upsert` without awaiting listeners, so ordering and back-pressure are ours to keep.
 */
export class InboundQueue {
  private tail: Promise<void> = Promise.resolve();
  private readonly seen = new SeenMessages();

  constructor(
    private readonly deliver: (message: InboundMessage) => Promise<void>,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  enqueue(messages: WAMessage[], resolver: LidResolver): void {
    this.tail = this.tail
      .then(() => this.handle(messages, resolver))
      .catch((err: unknown) => this.log.error({ err }, 'inbound message handling failed'));
  }

  /** Resolves once everything enqueued so far was handed on (or failed). */
  drain(): Promise<void> {
    return this.tail;
  }

  private async handle(messages: WAMessage[], resolver: LidResolver): Promise<void> {
    for (const msg of messages) {
      let mapped;
      try {
        mapped = await mapInbound(msg, { resolver, now: () => this.clock.now() });
      } catch (err) {
        this.log.error({ err, id: msg.key.id }, 'could not map an inbound message');
        continue;
      }
      if (!mapped.ok) {
        this.log.trace({ id: msg.key.id, skip: mapped.skip }, 'inbound message skipped');
        continue;
      }
      const { message } = mapped;
      if (!this.seen.claim(message.messageId)) continue;
      if (message.from === null) this.log.debug({ id: message.messageId, sender: message.sender }, 'sender phone number unknown; reporting the LID');
      try {
        await this.deliver(message);
      } catch (err) {
        // Baileys has acked it already; a later copy (offline backlog) is the only second chance.
        this.seen.release(message.messageId);
        this.log.error({ err, id: message.messageId }, 'onMessage hook failed; the message was not stored');
      }
    }
  }
}
