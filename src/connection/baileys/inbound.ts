import type { WAMessage } from '@whiskeysockets/baileys';
import type { Logger } from 'pino';
import type { Clock } from '../../domain/clock.js';
import type { ConnectionHooks, MessageUpdate } from '../types.js';
import { SeenMessages, mapUpsert, type LidResolver, type MapOptions } from './mapping.js';

/**
 * Hands what Baileys reports to the daemon one at a time, in arrival order, each message once:
 * received messages (with their media), and updates (receipts, reactions, edits, deletes). Baileys
 * fires its events without awaiting listeners, so ordering and back-pressure are ours to keep.
 */
export class InboundQueue {
  private tail: Promise<void> = Promise.resolve();
  private readonly seen = new SeenMessages();

  constructor(
    private readonly hooks: Pick<ConnectionHooks, 'onMessage' | 'onUpdate'>,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  private chain(task: () => Promise<void>): void {
    this.tail = this.tail.then(task).catch((err: unknown) => this.log.error({ err }, 'inbound handling failed'));
  }

  /** `self`: the account, so what it sent from elsewhere is reported (see MapOptions). */
  enqueue(messages: WAMessage[], resolver: LidResolver, download: (msg: WAMessage) => Promise<Uint8Array>, self?: MapOptions['self']): void {
    this.chain(() => this.handle(messages, resolver, download, self));
  }

  /** Runs `task` in arrival order with everything else handed on (group notifications, poll votes). */
  run(task: () => Promise<void>): void {
    this.chain(task);
  }

  updates(updates: MessageUpdate[]): void {
    this.chain(async () => {
      for (const u of updates) {
        try {
          await this.hooks.onUpdate(u);
        } catch (err) {
          this.log.error({ err, id: u.messageId, kind: u.kind }, 'a message update was not stored');
        }
      }
    });
  }

  /** Resolves once everything enqueued so far was handed on (or failed). */
  drain(): Promise<void> {
    return this.tail;
  }

  private async handle(messages: WAMessage[], resolver: LidResolver, download: (msg: WAMessage) => Promise<Uint8Array>, self: MapOptions['self']): Promise<void> {
    for (const msg of messages) {
      let mapped;
      try {
        mapped = await mapUpsert(msg, { resolver, download, now: () => this.clock.now(), self });
      } catch (err) {
        this.log.error({ err, id: msg.key.id }, 'could not map an inbound message');
        continue;
      }
      if (!mapped.ok) {
        this.log.trace({ id: msg.key.id, skip: mapped.skip }, 'inbound message skipped');
        continue;
      }
      if (mapped.kind === 'update') {
        try {
          await this.hooks.onUpdate(mapped.update);
        } catch (err) {
          this.log.error({ err, id: mapped.update.messageId }, 'a message update was not stored');
        }
        continue;
      }
      const { message, media, extra } = mapped;
      if (!this.seen.claim(message.messageId)) continue;
      if (message.from === null) this.log.debug({ id: message.messageId, sender: message.sender }, 'sender phone number unknown; reporting the LID');
      try {
        await this.hooks.onMessage(message, media, extra);
      } catch (err) {
        // Baileys has acked it already; a later copy (offline backlog) is the only second chance.
        this.seen.release(message.messageId);
        this.log.error({ err, id: message.messageId }, 'onMessage hook failed; the message was not stored');
      }
    }
  }
}
