import type { AuthStateRepository } from './ports/auth-state.js';
import type { CreditRepository } from './ports/credits.js';
import type { FlowRepository } from './ports/flows.js';
import type { InstanceRepository } from './ports/instances.js';
import type { MediaRepository } from './ports/media.js';
import type { MessageRepository } from './ports/messages.js';
import type { SessionStore } from './ports/sessions.js';
import type { OutboxStore } from './ports/outbox.js';
import type { OperatorRepository } from './ports/operators.js';
import type { AuditLog } from './ports/audit.js';
import type { UsageRepository } from './ports/usage.js';

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
  /** The chatbot: flows, open handovers and where each chat stands. */
  readonly flows: FlowRepository;
  /** Panel sessions (in memory with the files engine; shared by every node with PostgreSQL). */
  readonly sessions: SessionStore;
  /** Operators: named panel accounts (admin or agent) with scrypt password hashes. */
  readonly operators: OperatorRepository;
  /** Who did what: append-only, bounded by age. */
  readonly audit: AuditLog;
  /** Sends per instance and day (kept as long as history). */
  readonly usage: UsageRepository;
  /** WhatsApp sessions: credentials and Signal keys (phones stay paired wherever this is). */
  readonly auth: AuthStateRepository;
  /**
   * Removes everything stored for an instance (the last step of its deletion, also of one a crash
   * interrupted); true when there was something to remove.
   */
  removeInstance(instanceId: string): Promise<boolean>;
  /** The webhook outbox: deliveries and what became of them. */
  readonly outbox: OutboxStore;
  /** Writes what is queued and closes (the daemon stops). */
  close(): Promise<void>;
}
