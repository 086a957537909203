import type pg from 'pg';
import type { Logger } from 'pino';
import { pino } from 'pino';
import { isInitialised, loadConfig } from '../../config/load.js';
import { DAY_MS } from '../../domain/clock.js';
import { GatewayError } from '../../domain/errors.js';
import { hashSecret } from '../../domain/secrets.js';
import type { InstanceRecord } from '../../schemas/instance.js';
import { dataDirHolder, lockDataDir, unlockDataDir } from '../files/data-dir-lock.js';
import type { Db } from '../postgres/db.js';
import { copyAudit } from './copy-audit.js';
import { copyAuth } from './copy-auth.js';
import { copyFlows } from './copy-flows.js';
import { copyMedia } from './copy-media.js';
import { copyMessages } from './copy-messages.js';
import { copyOperators } from './copy-operators.js';
import { copyOutbox } from './copy-outbox.js';
import { copyCredits, copyInstance, copyOwners } from './copy-records.js';
import { copyUsage } from './copy-usage.js';
import { differences, gatewayDifferences, targetCounts, targetGatewayCounts, type KindCounts } from './counts.js';
import { GATEWAY_KINDS, KINDS, completeMigration, forgetDone, lockTarget, markDone, markGatewayDone, secretShown, startMigration, type GatewayKind, type Kind } from './progress.js';
import { openFilesSource, type FilesSource } from './source.js';
import { sourceCounts, sourceGatewayCounts } from './source-counts.js';
import { listSourceMedia } from './source-media.js';
import { openSourceMessages, type SourceMessages } from './source-messages.js';
import { checkTargetUrl, openTarget, redactUrl } from './target.js';

export type ProgressEvent =
  | { kind: 'start'; resumed: boolean; run: number; instances: number }
  | { kind: 'gateway'; copied: Partial<Record<GatewayKind, string>>; earlier: GatewayKind[] }
  | { kind: 'instance'; instanceId: string; index: number; of: number; copied: Partial<Record<Kind, string>>; earlier: Kind[] }
  | { kind: 'checked'; instances: number };

export interface MigrationReport {
  dataDir: string;
  /** The target, its password masked. */
  database: string;
  /** This run finished a migration an interruption had stopped. */
  resumed: boolean;
  /** The migration had completed before; this run only shows the cluster secret it never printed. */
  completedBefore: boolean;
  owners: number;
  /** Operators (panel accounts) and audit log entries: the gateway's, not an instance's (checked equal). */
  operators: number;
  auditEntries: number;
  /** Per instance, what the files and the database both hold (checked equal). */
  instances: Array<{ instanceId: string; counts: KindCounts }>;
  /** The new gateway's cluster secret (shown once). */
  clusterSecret: string;
}

export interface MigrateOptions {
  dataDir: string;
  url: string;
  /** The cluster secret to create the gateway with (the caller makes a new one). */
  clusterSecret: string;
  /** Shows the report (and its cluster secret); the secret is forgotten once this resolves. */
  announce(report: MigrationReport): Promise<void>;
  onProgress?: (event: ProgressEvent) => void;
  logger?: Logger;
}

function noun(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * `gateway storage migrate --to URL`: copies a files data dir into an empty PostgreSQL database and
 * creates the gateway there (this data dir's server secret, a new cluster secret, its plans and
 * webhook policy as shared settings), so nodes on that database serve the same instances, keys,
 * credits, history, sessions (no QR), flows, webhook deliveries and usage per day, and the same
 * operators (who sign in with their passwords) and audit log.
 *
 * Under the data dir lock (as a CLI command with no daemon: a running daemon is refused), so the
 * files do not change while they are copied. Every write into the target is idempotent and each
 * kind of each instance (and each gateway-wide kind) is marked done in the target once copied, so
 * a run after an interruption (a kill, a lost connection) resumes where it stopped. At the end
 * every instance's counts per kind, and the gateway's (instances, owners, operators, audit
 * entries), are read again from both sides and compared; only then is the gateway record written
 * (one transaction with the completion mark): nodes cannot start on a half-copied database.
 */
export async function migrateDataDir(options: MigrateOptions): Promise<MigrationReport> {
  const { dataDir, url } = options;
  checkTargetUrl(url);
  if (!isInitialised(dataDir)) throw new GatewayError('CONFIG_INVALID', `${dataDir} is not an initialised data dir (no config.json): nothing to migrate`);
  // The data dir's own settings: the environment's database URL names the target, not the source.
  const config = loadConfig(dataDir);
  if (config.storage.postgres.url !== null) {
    throw new GatewayError('CONFIG_INVALID', `${dataDir} already keeps its state in PostgreSQL (storage.postgres.url is set): there are no files to migrate`);
  }
  if (config.serverSecretHash === null) throw new GatewayError('CONFIG_INVALID', `${dataDir} has no server secret (run \`gateway init --force\` first)`);
  const holder = dataDirHolder(dataDir);
  if (holder?.kind === 'daemon') throw new GatewayError('STORE_LOCKED', `the gateway daemon (pid ${holder.pid}) runs on this data dir: stop it first (the migration copies a data dir nothing writes to)`);
  const logger = options.logger ?? pino({ level: 'silent' });
  const lock = await lockDataDir(dataDir, 'cli', 30_000);
  let db: Db | null = null;
  let source: FilesSource | null = null;
  let targetLock: pg.PoolClient | null = null;
  try {
    db = await openTarget(url);
    targetLock = await lockTarget(db);
    source = await openFilesSource(dataDir, config, lock, logger);
    const now = Date.now();
    const ids = source.instances.map((r) => r.id);
    const start = await startMigration(db, { id: config.serverSecretHash, dataDir, instanceIds: ids });
    const base = { dataDir, database: redactUrl(url), owners: Object.keys(source.owners).length };
    if (start.state === 'completed') {
      if (start.clusterSecret === null) {
        throw new GatewayError('CONFLICT', `this data dir was migrated into that database already (completed ${start.completedAt}) and its cluster secret was shown then; nothing to do. Nodes join it with \`gateway init --database URL --cluster-secret S\``);
      }
      const g = await sourceGatewayCounts(source);
      const report: MigrationReport = { ...base, operators: g.operators, auditEntries: g.audit, resumed: false, completedBefore: true, instances: [], clusterSecret: start.clusterSecret };
      await options.announce(report);
      await secretShown(db);
      return report;
    }
    options.onProgress?.({ kind: 'start', resumed: start.state === 'resumed', run: start.runs, instances: ids.length });

    await copyOwners(db, source.owners);
    const copied: Partial<Record<GatewayKind, string>> = {};
    for (const kind of GATEWAY_KINDS) {
      if (start.gatewayDone.has(kind)) continue;
      if (kind === 'operators') copied.operators = noun(await copyOperators(db, source.operators), 'operator');
      else copied.audit = noun(await copyAudit(db, source.paths.auditDir), 'audit log entry', 'audit log entries');
      await markGatewayDone(db, kind);
    }
    options.onProgress?.({ kind: 'gateway', copied, earlier: GATEWAY_KINDS.filter((k) => start.gatewayDone.has(k)) });
    for (const [index, record] of source.instances.entries()) {
      const done = start.done.get(record.id) ?? new Set<Kind>();
      const copied = await copyOne(db, source, record, done, now);
      options.onProgress?.({ kind: 'instance', instanceId: record.id, index: index + 1, of: ids.length, copied, earlier: KINDS.filter((k) => done.has(k)) });
    }

    // Checked from both sides again, whatever an earlier run did.
    const instances: MigrationReport['instances'] = [];
    const wrong: string[] = [];
    const mismatched: string[] = [];
    for (const id of ids) {
      const files = await sourceCounts(source, id, now);
      const target = await targetCounts(db, id);
      const diff = differences(files, target);
      for (const d of diff) wrong.push(`${id}: ${d}`);
      if (diff.length > 0) mismatched.push(id);
      instances.push({ instanceId: id, counts: files });
    }
    const gateway = await sourceGatewayCounts(source);
    const gatewayWrong = gatewayDifferences(gateway, await targetGatewayCounts(db));
    wrong.push(...gatewayWrong);
    if (wrong.length > 0) {
      // What does not match is copied again by the next run (the files changed since it was copied).
      await forgetDone(db, mismatched, gatewayWrong.length > 0);
      throw new GatewayError('INTERNAL', `the copy does not match the files (${wrong.slice(0, 5).join('; ')}${wrong.length > 5 ? `; and ${wrong.length - 5} more` : ''}); the gateway was not created in the database: run the migration again (it copies those again)`);
    }
    options.onProgress?.({ kind: 'checked', instances: ids.length });

    await completeMigration(
      db,
      {
        serverSecretHash: config.serverSecretHash,
        retiringSecretHash: config.retiringServerSecretHash ?? null,
        clusterSecretHash: hashSecret(options.clusterSecret),
        // What `gateway init --database` shares: one gateway, one set of plans and one webhook policy.
        settings: { plans: config.plans, webhooks: config.webhooks },
      },
      options.clusterSecret,
    );
    const report: MigrationReport = {
      ...base,
      operators: gateway.operators,
      auditEntries: gateway.audit,
      resumed: start.state === 'resumed',
      completedBefore: false,
      instances,
      clusterSecret: options.clusterSecret,
    };
    await options.announce(report);
    await secretShown(db);
    return report;
  } finally {
    await source?.close().catch(() => undefined);
    // Destroyed, not pooled: its session's migration lock goes with it.
    targetLock?.release(true);
    await db?.end().catch(() => undefined);
    await unlockDataDir(lock);
  }
}

/** Copies the kinds of one instance not done yet, marking each once copied; says what it copied. */
async function copyOne(db: Db, source: FilesSource, record: InstanceRecord, done: ReadonlySet<Kind>, now: number): Promise<Partial<Record<Kind, string>>> {
  const id = record.id;
  const { config, paths } = source;
  const copied: Partial<Record<Kind, string>> = {};
  let messages: SourceMessages | null = null;
  try {
    if (!done.has('messages') || !done.has('media')) messages = await openSourceMessages(paths.messagesDir, id, config.history, now, source.guard);
    for (const kind of KINDS) {
      if (done.has(kind)) continue;
      switch (kind) {
        case 'instance':
          await copyInstance(db, record);
          copied.instance = 'instance record';
          break;
        case 'credits': {
          const c = source.credits(id);
          await copyCredits(db, id, c);
          copied.credits = `credits ${c.balance} (spent ${c.spent})`;
          break;
        }
        case 'auth': {
          const a = await copyAuth(db, source.auth, id, now);
          copied.auth = a.creds === 0 ? 'no WhatsApp session' : `WhatsApp creds + ${noun(a.tables, 'key table')}${a.paired ? ' (paired)' : ''}`;
          break;
        }
        case 'messages':
          copied.messages = noun(await copyMessages(db, id, messages!), 'message');
          break;
        case 'media': {
          const files = await listSourceMedia(paths.mediaDir, id, config.media.keepDays * DAY_MS, now, messages!.droppedWithMedia);
          const m = await copyMedia(db, id, files);
          copied.media = `${noun(m.files, 'media file')} (${m.bytes} bytes)`;
          break;
        }
        case 'flows': {
          const f = await copyFlows(db, source.flows, id);
          copied.flows = `${f.flow ? 'flow' : 'no flow'}, ${noun(f.handovers, 'open handover')}, ${noun(f.conversations, 'conversation position')}`;
          break;
        }
        case 'outbox': {
          const o = await copyOutbox(db, source.outbox, id);
          copied.outbox = `${noun(o.deliveries, 'webhook delivery', 'webhook deliveries')} (${o.pending} pending)`;
          break;
        }
        case 'usage': {
          const u = await copyUsage(db, source.usage, id);
          copied.usage = `${noun(u.days, 'day')} of usage (${noun(u.sent, 'message')} sent)`;
          break;
        }
      }
      await markDone(db, id, kind);
    }
  } finally {
    await messages?.close();
  }
  return copied;
}
