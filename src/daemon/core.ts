import type { Logger } from 'pino';
import type { WriteGuard } from '../fs/write-guard.js';
import type { GatewayConfig } from '../config/schema.js';
import type { ServerSecret } from '../config/server-secret.js';

export type { ServerSecret };
import type { ConnectionManager } from '../connection/manager.js';
import type { Clock } from '../domain/clock.js';
import type { Timers } from '../domain/timers.js';
import type { EventBus } from '../events/bus.js';
import type { MessageHub } from '../messages/hub.js';
import type { MetricsSink } from '../domain/metrics-sink.js';
import type { StatusReporter } from '../status/status-reporter.js';
import type { SendService } from '../sending/send-service.js';
import type { CreditRepository } from '../storage/ports/credits.js';
import type { InstanceRepository } from '../storage/ports/instances.js';
import type { Storage } from '../storage/storage.js';
import type { MediaRepository } from '../storage/ports/media.js';
import type { MessageRepository } from '../storage/ports/messages.js';
import type { StorePaths } from '../storage/files/paths.js';

import type { DaemonMode } from '../features/feature.js';

export type { DaemonMode };

/**
 * The parts the daemon was built from, as the boot module and the tests see them. Features never
 * get this bag: each is built from only the parts it names (see features/feature.ts).
 */
export interface Core {
  readonly mode: DaemonMode;
  readonly dataDir: string;
  /** The data dir lock of this process (every files write checks it). */
  readonly guard: WriteGuard;
  readonly paths: StorePaths;
  readonly config: GatewayConfig;
  readonly serverSecret: ServerSecret;
  readonly clock: Clock;
  /** Waits on the clock's time (real timers, or manual ones in tests). */
  readonly timers: Timers;
  readonly logger: Logger;
  /** Every durable thing, behind its ports (features take the ports they use). */
  readonly storage: Storage;
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
}
