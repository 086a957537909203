import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/schema.js';
import type { ConnectionManager } from '../connection/manager.js';
import type { Clock } from '../domain/clock.js';
import type { Timers } from '../domain/timers.js';
import type { EventBus } from '../events/bus.js';
import type { MessageHub } from '../messages/hub.js';
import type { MetricsSink } from '../metrics/sink.js';
import type { StatusReporter } from '../plans/status-reporter.js';
import type { SendService } from '../sending/send-service.js';
import type { CreditRepository } from '../storage/ports/credits.js';
import type { InstanceRepository } from '../storage/ports/instances.js';
import type { MediaRepository } from '../storage/ports/media.js';
import type { MessageRepository } from '../storage/ports/messages.js';
import type { StorePaths } from '../storage/files/paths.js';
import type { Storage } from '../storage/storage.js';

/**
 * Whether this process is the daemon (connections open, deliveries running) or a CLI command
 * working on the data dir while no daemon runs (nothing is started unless a command asks).
 */
export type DaemonMode = 'daemon' | 'offline';

/** The server secret's hash: read per request, replaced by `gateway init --force` at run time. */
export interface ServerSecret {
  hash(): string | null;
  /** Generates a new secret, stores its hash in config.json, and returns it (shown once). */
  rotate(): Promise<string>;
}

/**
 * The core parts every feature is built from. Features read them and call their methods; they
 * never replace or mutate them (the composition root owns the wiring).
 */
export interface Core {
  readonly mode: DaemonMode;
  readonly dataDir: string;
  readonly paths: StorePaths;
  readonly config: GatewayConfig;
  readonly serverSecret: ServerSecret;
  readonly clock: Clock;
  /** Waits on the clock's time (real timers, or manual ones in tests). */
  readonly timers: Timers;
  readonly logger: Logger;
  readonly instances: InstanceRepository;
  readonly credits: CreditRepository;
  readonly bus: EventBus;
  readonly manager: ConnectionManager;
  readonly status: StatusReporter;
  readonly sender: SendService;
  readonly metrics: MetricsSink;
  /** Messages in and out: lifecycle and history. */
  readonly messages: MessageRepository;
  /** The bytes of media messages. */
  readonly media: MediaRepository;
  /** Where connection reports and sends become stored facts and events. */
  readonly hub: MessageHub;
  /** Every port of the storage engine (the webhook outbox is read from here). */
  readonly storage: Storage;
}
