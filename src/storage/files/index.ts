import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { storageError } from '../../domain/errors.js';
import type { GatewayConfig } from '../../config/schema.js';
import { DAY_MS, type Clock } from '../../domain/clock.js';
import type { Timers } from '../../domain/timers.js';
import type { Storage } from '../storage.js';
import { ensureDir, type WriteGuard } from '../../fs/atomic-write.js';
import { FileAuthStates } from './auth-state.js';
import { CreditLedger } from './credit-ledger.js';
import { MemorySessionStore } from '../ports/sessions.js';
import { FlowFiles } from './flows.js';
import { CreditStore } from './credits.js';
import { InstanceStore } from './instances.js';
import { MediaFiles } from './media.js';
import { MessageStore } from './messages/store.js';
import { FileOutboxStore } from './outbox/store.js';
import { storePaths } from './paths.js';
import { OperatorFiles } from './operators.js';
import { AuditFiles } from './audit.js';
import { UsageFiles } from './usage.js';

export interface FileStorageOptions {
  dataDir: string;
  config: GatewayConfig;
  clock: Clock;
  timers: Timers;
  logger: Logger;
  /** The data dir lock of this process, checked right before every write commits. */
  guard: WriteGuard;
}

/**
 * The files engine: everything in one data dir, written by the one process that holds its lock
 * (the daemon, or a CLI command while none runs). Opening it loads the instances and checks every
 * credit journal, so a corrupt file stops start-up naming it.
 */
export async function openFileStorage(options: FileStorageOptions): Promise<Storage> {
  const { dataDir, config, clock, timers, logger, guard } = options;
  const paths = storePaths(dataDir);
  await ensureDir(paths.creditsDir);
  await ensureDir(paths.authDir);
  const instances = new InstanceStore(dataDir, clock, config.plans.trialDays, guard);
  await instances.load();
  const creditStore = new CreditStore(dataDir, guard);
  const credits = new CreditLedger(creditStore, logger);
  await credits.open(instances.list().map((r) => r.id));
  const media = new MediaFiles(paths.mediaDir, { keepMs: config.media.keepDays * DAY_MS, maxBytesPerInstance: config.media.maxStoreBytes }, guard);
  const auth = new FileAuthStates(paths.authDir, guard);
  const messages = new MessageStore({ root: paths.messagesDir, history: config.history, media, clock, timers, logger, guard });
  const outbox = new FileOutboxStore({ dataDir, guard, logger: logger.child({ part: 'webhooks' }), instanceExists: (id) => instances.get(id) !== undefined });
  await outbox.load();
  const operators = new OperatorFiles(paths.operators, guard);
  await operators.load();
  const audit = new AuditFiles(paths.auditDir, guard);
  const usage = new UsageFiles(paths.usageDir, guard, logger);
  return {
    engine: 'files',
    instances,
    credits,
    messages,
    media,
    auth,
    // One host: sessions live in this process (a restart signs everyone out).
    sessions: new MemorySessionStore(),
    flows: new FlowFiles(paths.flowsDir, guard),
    operators,
    audit,
    usage,
    async removeInstance(id) {
      // Whatever an interrupted delete left counts as found (the delete is then finished).
      let found = [creditStore.journalFile(id), paths.credits(id), auth.file(id), join(paths.authDir, `${id}.sandbox.json`)].some((f) => existsSync(f));
      await credits.remove(id);
      await auth.remove(id);
      await messages.removeInstance(id);
      await usage.removeInstance(id);
      // Every folder named after the instance (outbox, flows, messages, media).
      const remove = async (path: string): Promise<void> => {
        try {
          await rm(path, { recursive: true, force: false });
          found = true;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw storageError(err, `removing ${path}`);
        }
      };
      for (const dir of [paths.outboxDir, paths.flowsDir, paths.messagesDir, paths.mediaDir]) await remove(join(dir, id));
      return found;
    },
    outbox,
    async close() {
      await usage.flush().catch((err: unknown) => logger.warn({ err }, 'could not write the last usage counts'));
      await audit.close();
      await outbox.close();
      await messages.stop();
      await credits.close();
    },
  };
}
