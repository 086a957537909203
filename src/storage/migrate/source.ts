import type { Logger } from 'pino';
import type { GatewayConfig } from '../../config/schema.js';
import { systemClock } from '../../domain/clock.js';
import type { WriteGuard } from '../../fs/write-guard.js';
import type { InstanceRecord, InstancesDoc } from '../../schemas/instance.js';
import { FileAuthStates } from '../files/auth-state.js';
import { CreditStore } from '../files/credits.js';
import { FlowFiles } from '../files/flows.js';
import { InstanceStore } from '../files/instances.js';
import { OperatorFiles } from '../files/operators.js';
import { FileOutboxStore } from '../files/outbox/store.js';
import { storePaths, type StorePaths } from '../files/paths.js';
import { UsageFiles } from '../files/usage.js';

/**
 * A files data dir opened for reading by a migration, under its data dir lock: the files engine's
 * own readers, so what is copied is what the engine itself would load (a corrupt file stops the
 * migration naming it, as it stops the daemon).
 */
export interface FilesSource {
  readonly dataDir: string;
  readonly paths: StorePaths;
  readonly config: GatewayConfig;
  /** Instances in service, oldest first (one whose deletion was interrupted is not copied). */
  readonly instances: readonly InstanceRecord[];
  /** Owners whose one-time trial was granted (also owners of instances deleted since). */
  readonly owners: InstancesDoc['owners'];
  /** Credits as the files engine loads them; holds found (sends a stop interrupted) are released. */
  credits(instanceId: string): { balance: number; spent: number };
  readonly auth: FileAuthStates;
  readonly flows: FlowFiles;
  readonly outbox: FileOutboxStore;
  /** Operators (gateway-wide; a corrupt operators.json stops the migration naming it). */
  readonly operators: OperatorFiles;
  /** Sends per instance and day. */
  readonly usage: UsageFiles;
  readonly guard: WriteGuard;
  close(): Promise<void>;
}

export async function openFilesSource(dataDir: string, config: GatewayConfig, guard: WriteGuard, logger: Logger): Promise<FilesSource> {
  const paths = storePaths(dataDir);
  const store = new InstanceStore(dataDir, systemClock, config.plans.trialDays, guard);
  await store.load();
  const credits = new CreditStore(dataDir, guard);
  await credits.verifyAll();
  const outbox = new FileOutboxStore({ dataDir, guard, logger, instanceExists: (id) => store.get(id) !== undefined });
  await outbox.load();
  const operators = new OperatorFiles(paths.operators, guard);
  await operators.load();
  return {
    dataDir,
    paths,
    config,
    instances: store.list(),
    owners: store.data.owners,
    credits(id) {
      // A hold counts in the balance until its debit: releasing it leaves the balance as it is.
      const { state } = credits.loadSync(id);
      return { balance: state.balance, spent: state.spent };
    },
    auth: new FileAuthStates(paths.authDir, guard),
    flows: new FlowFiles(paths.flowsDir, guard),
    outbox,
    operators,
    // Only read: nothing is counted, so it never writes.
    usage: new UsageFiles(paths.usageDir, guard, logger),
    guard,
    close: () => outbox.close(),
  };
}
