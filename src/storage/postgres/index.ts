import type { Logger } from 'pino';
import type { GatewayConfig } from '../../config/schema.js';
import { DAY_MS, type Clock } from '../../domain/clock.js';
import { errorMessage } from '../../domain/errors.js';
import type { Timers } from '../../domain/timers.js';
import type { Storage } from '../storage.js';
import { PgAuthStates } from './auth-state.js';
import { PgFlows } from './flows.js';
import { PgOutbox } from './outbox.js';
import { PgSessions } from './sessions.js';
import { PgOperators } from './operators.js';
import { PgAudit } from './audit.js';
import { PgUsage } from './usage.js';
import { PgCredits } from './credits.js';
import { Db } from './db.js';
import { LeaseEpochs } from './lease-epochs.js';
import { pgError } from './errors.js';
import { PgInstances } from './instances.js';
import { PgMedia } from './media.js';
import { PgMessages } from './messages.js';
import { migrate } from './migrate.js';
import { Session } from './session.js';

export interface PostgresStorageOptions {
  /** postgres://user@host:port/database */
  url: string;
  config: GatewayConfig;
  clock: Clock;
  timers: Timers;
  logger: Logger;
  /** Connections for durable work (default 10) and for writes that may be lost in a crash (default 4). */
  poolSize?: number;
  lazyPoolSize?: number;
  /** This node's id (several hosts): its connections carry it, so its writes are fenced by leases. */
  nodeId?: string;
  /** How long a send waits for its debit while the database is away (default DEBIT_WAIT_MS, 5 s). */
  debitWaitMs?: number;
  /** How long spare credit holds no send takes are kept (default SPARE_IDLE_MS, 250 ms; tests). */
  spareIdleMs?: number;
}

/** The PostgreSQL engine, with what the cluster code builds on. */
export interface PostgresStorage extends Storage {
  readonly db: Db;
  readonly session: Session;
  /** The lease epochs this node's writes carry: the cluster binds them to its leases. */
  readonly epochs: LeaseEpochs;
  /** Other processes' changes of the gateway record and of leases. */
  onShared(listener: (kind: 'gateway' | 'leases', id: string) => void): () => void;
  /** A reconnect may have missed changes. */
  onResync(listener: () => void): () => void;
}

/** Holds of processes that died are looked for this often (and at start-up). */
const STALE_HOLDS_EVERY_MS = 60_000;

/**
 * The PostgreSQL engine: every durable thing in one database that any number of processes may
 * share. Opening it applies the migrations (under an advisory lock), starts this process' session
 * (its liveness lock and its LISTEN connection), loads the instances and credit balances into
 * memory and releases the credit holds of processes that are gone.
 *
 * Client: node-postgres (`pg`), chosen over `postgres` (porsager) by bench/pg-clients.ts, the hot
 * path of a send (hold, pending insert, debit, sent status; 50 in flight, same SQL, same pools):
 * 723 vs 638 sends/s (median of 4 alternating rounds, 2 shared cores) and 316 vs 385 µs of client
 * CPU per send. The database dominates either way; pg also gives a plain LISTEN client and pool
 * `error` events that we log instead of crashing.
 */
export async function openPostgresStorage(options: PostgresStorageOptions): Promise<PostgresStorage> {
  const { url, config, clock, timers, logger } = options;
  const shared = new Set<(kind: 'gateway' | 'leases', id: string) => void>();
  const resyncs = new Set<() => void>();
  const epochs = new LeaseEpochs();
  const db = new Db({ url, logger, ...(options.nodeId ? { nodeId: options.nodeId } : {}), ...(options.poolSize ? { poolSize: options.poolSize } : {}), ...(options.lazyPoolSize ? { lazyPoolSize: options.lazyPoolSize } : {}) });
  let session: Session | null = null;
  try {
    const client = await db.pool.connect().catch((err: unknown) => {
      throw pgError(err, 'opening the database');
    });
    try {
      const applied = await migrate(client);
      if (applied.length > 0) logger.info({ versions: applied }, 'database schema migrated');
    } catch (err) {
      throw pgError(err, 'migrating the database');
    } finally {
      client.release();
    }
    const instances: PgInstances = new PgInstances(db, () => session!, clock, config.plans.trialDays, logger);
    const credits: PgCredits = new PgCredits(db, () => session!, logger, epochs, options.debitWaitMs, options.spareIdleMs);
    session = await Session.start(url, logger, {
      changed(kind, id) {
        if (kind === 'instances') void instances.changed(id);
        else if (kind === 'credits') void credits.changed(id);
        else for (const l of shared) l(kind, id);
      },
      resync() {
        for (const l of resyncs) l();
        void instances.resync();
        void credits.reloadAll().catch((err: unknown) => logger.warn({ err: errorMessage(err) }, 'could not re-read the credits after a reconnect'));
      },
    }).catch((err: unknown) => {
      throw pgError(err, 'opening the database session');
    });
    await instances.load();
    await credits.open(instances.list().map((r) => r.id));
    const media = new PgMedia(db, { keepMs: config.media.keepDays * DAY_MS, maxBytesPerInstance: config.media.maxStoreBytes }, epochs);
    const auth = new PgAuthStates(db);
    const flows = new PgFlows(db, epochs);
    const outbox = new PgOutbox(db, epochs);
    const messages = new PgMessages({ db, history: config.history, media, clock, timers, logger, epochs });
    const usage = new PgUsage(db, logger);
    const stale = setInterval(() => {
      credits.releaseStale().catch((err: unknown) => logger.warn({ err: errorMessage(err) }, 'could not look for credit holds of processes that are gone'));
    }, STALE_HOLDS_EVERY_MS);
    stale.unref();
    const liveSession = session;
    return {
      engine: 'postgres',
      db,
      session: liveSession,
      epochs,
      onShared(listener) {
        shared.add(listener);
        return () => shared.delete(listener);
      },
      onResync(listener) {
        resyncs.add(listener);
        return () => resyncs.delete(listener);
      },
      instances,
      credits,
      messages,
      media,
      auth,
      flows,
      outbox,
      sessions: new PgSessions(db),
      operators: new PgOperators(db),
      audit: new PgAudit(db),
      usage,
      async removeInstance(id) {
        // Whatever an interrupted delete left counts as found (the delete is then finished).
        const { rows } = await db.query<{ found: boolean }>(
          'removing an instance',
          `WITH a AS (DELETE FROM credit_holds WHERE instance_id = $1 RETURNING 1),
            b AS (DELETE FROM credits WHERE instance_id = $1 RETURNING 1),
            c AS (DELETE FROM auth_keys WHERE instance_id = $1 RETURNING 1),
            d AS (DELETE FROM auth_creds WHERE instance_id = $1 RETURNING 1),
            e AS (DELETE FROM messages WHERE instance_id = $1 RETURNING 1),
            f AS (DELETE FROM media WHERE instance_id = $1 RETURNING 1),
            g AS (DELETE FROM flows WHERE instance_id = $1 RETURNING 1),
            h AS (DELETE FROM handovers WHERE instance_id = $1 RETURNING 1),
            i AS (DELETE FROM conversations WHERE instance_id = $1 RETURNING 1),
            j AS (DELETE FROM deliveries WHERE instance_id = $1 RETURNING 1),
            l AS (DELETE FROM leases WHERE instance_id = $1 RETURNING 1)
          SELECT EXISTS (SELECT 1 FROM a UNION ALL SELECT 1 FROM b UNION ALL SELECT 1 FROM c UNION ALL SELECT 1 FROM d UNION ALL SELECT 1 FROM e UNION ALL SELECT 1 FROM f
            UNION ALL SELECT 1 FROM g UNION ALL SELECT 1 FROM h UNION ALL SELECT 1 FROM i UNION ALL SELECT 1 FROM j) AS found`,
          [id],
        );
        await usage.removeInstance(id);
        credits.dropCached(id);
        messages.forget(id);
        return rows[0]?.found ?? false;
      },
      async close() {
        clearInterval(stale);
        await usage.flush().catch((err: unknown) => logger.warn({ err: errorMessage(err) }, 'could not write the last usage counts'));
        await outbox.close();
        await messages.stop();
        await credits.close();
        await liveSession.close();
        await db.end();
      },
    };
  } catch (err) {
    await session?.close();
    await db.end().catch(() => undefined);
    throw err;
  }
}
