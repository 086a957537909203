import type { Logger } from 'pino';
import type { GatewayConfig } from '../../config/schema.js';
import { DAY_MS, type Clock } from '../../domain/clock.js';
import type { Timers } from '../../domain/timers.js';
import type { Storage } from '../storage.js';
import { ensureDir } from './atomic-write.js';
import { CreditLedger } from './credit-ledger.js';
import { CreditStore } from './credits.js';
import { InstanceStore } from './instances.js';
import { MediaFiles } from './media.js';
import { MessageStore } from './messages/store.js';
import { FileOutboxStore } from './outbox/store.js';
import { storePaths } from './paths.js';

export interface FileStorageOptions {
  dataDir: string;
  config: GatewayConfig;
  clock: Clock;
  timers: Timers;
  logger: Logger;
}

/**
 * The files engine: everything in one data dir, written by the one process that holds its lock
 * (the daemon, or a CLI command while none runs). Opening it loads the instances and checks every
 * credit journal, so a corrupt file stops start-up naming it.
 */
export async function openFileStorage(options: FileStorageOptions): Promise<Storage> {
  const { dataDir, config, clock, timers, logger } = options;
  const paths = storePaths(dataDir);
  await ensureDir(paths.creditsDir);
  await ensureDir(paths.authDir);
  const instances = new InstanceStore(dataDir, clock, config.plans.trialDays);
  await instances.load();
  const credits = new CreditLedger(new CreditStore(dataDir), logger);
  await credits.open(instances.list().map((r) => r.id));
  const media = new MediaFiles(paths.mediaDir, { keepMs: config.media.keepDays * DAY_MS, maxBytesPerInstance: config.media.maxStoreBytes });
  const messages = new MessageStore({ root: paths.messagesDir, history: config.history, media, clock, timers, logger });
  const outbox = new FileOutboxStore({ dataDir, logger: logger.child({ part: 'webhooks' }), instanceExists: (id) => instances.get(id) !== undefined });
  await outbox.load();
  return {
    engine: 'files',
    instances,
    credits,
    messages,
    media,
    outbox,
    async close() {
      await outbox.close();
      await messages.stop();
      await credits.close();
    },
  };
}
