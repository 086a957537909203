import type { CreditRepository } from './ports/credits.js';
import type { InstanceRepository } from './ports/instances.js';
import type { MediaRepository } from './ports/media.js';
import type { MessageRepository } from './ports/messages.js';
import type { OutboxStore } from './ports/outbox.js';

/** Which engine holds the gateway's durable state. */
export type StorageEngine = 'files' | 'postgres';

/**
 * Every durable thing the gateway keeps, behind its ports. Features are built from the ports they
 * use and never know which engine they run on; the engines are checked by the same contract tests
 * (test/storage/).
 */
export interface Storage {
  readonly engine: StorageEngine;
  readonly instances: InstanceRepository;
  readonly credits: CreditRepository;
  readonly messages: MessageRepository;
  readonly media: MediaRepository;
  /** The webhook outbox: deliveries and what became of them. */
  readonly outbox: OutboxStore;
  /** Writes what is queued and closes (the daemon stops). */
  close(): Promise<void>;
}
