import type pg from 'pg';
import { GatewayError } from '../../domain/errors.js';
import type { Db } from '../postgres/db.js';
import { LOCK_NAMESPACE } from '../postgres/migrate.js';

/** What is copied of each instance, in this order; each is marked done once copied whole. */
export const KINDS = ['instance', 'credits', 'auth', 'messages', 'media', 'flows', 'outbox', 'usage'] as const;
export type Kind = (typeof KINDS)[number];

/**
 * What is copied of the gateway as a whole (not of one instance), before the instances; each is
 * marked done once copied whole. (The owners' trial records, a handful of rows, are written again
 * on every run.)
 */
export const GATEWAY_KINDS = ['operators', 'audit'] as const;
export type GatewayKind = (typeof GATEWAY_KINDS)[number];

/** Held by the migration writing into a database (second key of LOCK_NAMESPACE). */
const MIGRATION_LOCK = 23;

/**
 * The migration's own record in the target: which data dir it copies (its server secret hash:
 * another data dir is another gateway), when it started and completed, and per instance the kinds
 * already copied, so a run after an interruption resumes instead of refusing. Not part of the
 * engine's schema (no node reads it), so created here; kept after completion as the mark that this
 * data dir was migrated (and to show a cluster secret a kill hid before it was printed).
 */
const PROGRESS_TABLES = `
CREATE TABLE IF NOT EXISTS files_migration (
  id integer PRIMARY KEY CHECK (id = 1),
  source text NOT NULL,
  data_dir text NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  runs integer NOT NULL DEFAULT 1,
  completed_at timestamptz,
  -- The new gateway's cluster secret, from completion until it was printed (then NULL).
  cluster_secret text
);
-- The gateway-wide kinds copied (a migration started by an earlier version has no such column yet).
ALTER TABLE files_migration ADD COLUMN IF NOT EXISTS done text[] NOT NULL DEFAULT '{}';
CREATE TABLE IF NOT EXISTS files_migration_instances (
  instance_id text PRIMARY KEY,
  done text[] NOT NULL DEFAULT '{}'
);`;

/** Every table of the engine's schema that holds state: a fresh target has a row in none. */
const STATE_TABLES = [
  'gateway',
  'nodes',
  'leases',
  'instances',
  'owners',
  'operators',
  'audit',
  'credits',
  'credit_holds',
  'messages',
  'media',
  'auth_creds',
  'auth_keys',
  'flows',
  'handovers',
  'conversations',
  'deliveries',
  'usage_days',
] as const;
/** The tables whose rows belong to an instance (audit entries name instances, deleted ones too: not one of them). */
const INSTANCE_TABLES = ['instances', 'credits', 'credit_holds', 'messages', 'media', 'auth_creds', 'auth_keys', 'flows', 'handovers', 'conversations', 'deliveries', 'usage_days'] as const;

export type Start =
  | { state: 'fresh' | 'resumed'; done: Map<string, Set<Kind>>; gatewayDone: Set<GatewayKind>; runs: number }
  | { state: 'completed'; completedAt: string; clusterSecret: string | null };

function refused(why: string): GatewayError {
  return new GatewayError('CONFLICT', `the target database is not empty: ${why}; nothing was copied. Migrate into a new, empty database (createdb NAME)`);
}

/**
 * Takes the database's migration lock for this session (one migration writes into a database at a
 * time; a killed one's lock goes with its connection), on a connection of its own that the caller
 * ends when done.
 */
export async function lockTarget(db: Db): Promise<pg.PoolClient> {
  const client = await db.pool.connect();
  const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS locked', [LOCK_NAMESPACE, MIGRATION_LOCK]);
  if (!rows[0]?.locked) {
    client.release();
    throw new GatewayError('CONFLICT', 'another `gateway storage migrate` is writing into this database now; let it finish');
  }
  return client;
}

/**
 * Decides what this run does: a fresh migration (the database holds nothing of a gateway), the
 * resumption of this data dir's interrupted one, or nothing (it completed; its cluster secret is
 * handed back while it was never printed). Anything else is refused, naming why.
 */
export async function startMigration(db: Db, source: { id: string; dataDir: string; instanceIds: readonly string[] }): Promise<Start> {
  return db.transaction('the migration record', async (client) => {
    await client.query(PROGRESS_TABLES);
    const { rows: mine } = await client.query<{ source: string; data_dir: string; started_at: Date; completed_at: Date | null; cluster_secret: string | null; runs: number; done: string[] }>(
      'SELECT source, data_dir, started_at, completed_at, cluster_secret, runs, done FROM files_migration WHERE id = 1 FOR UPDATE',
    );
    const m = mine[0];
    const { rows: gateway } = await client.query<{ created_at: Date }>('SELECT created_at FROM gateway WHERE id = 1');
    if (m && m.source === source.id && m.completed_at) {
      if (gateway[0]) return { state: 'completed', completedAt: m.completed_at.toISOString(), clusterSecret: m.cluster_secret };
    }
    if (gateway[0]) throw refused(`it holds a gateway (created ${gateway[0].created_at.toISOString()})`);
    if (m && m.source !== source.id) throw refused(`it holds an unfinished migration of another data dir (${m.data_dir}, started ${m.started_at.toISOString()})`);
    const { rows: nodes } = await client.query<{ n: number }>('SELECT (SELECT count(*) FROM nodes)::int + (SELECT count(*) FROM leases)::int AS n');
    if ((nodes[0]?.n ?? 0) > 0) throw refused('gateway nodes have used it (rows in nodes and leases)');
    if (!m) {
      const busy: string[] = [];
      for (const table of STATE_TABLES) {
        const { rows } = await client.query(`SELECT 1 FROM ${table} LIMIT 1`);
        if (rows.length > 0) busy.push(table);
      }
      if (busy.length > 0) throw refused(`it holds rows in ${busy.join(', ')}`);
      await client.query('INSERT INTO files_migration (id, source, data_dir) VALUES (1, $1, $2)', [source.id, source.dataDir]);
      await client.query('DELETE FROM files_migration_instances');
      return { state: 'fresh', done: new Map(), gatewayDone: new Set(), runs: 1 };
    }
    // Resuming: every row of an instance must be of an instance this data dir holds.
    const union = INSTANCE_TABLES.map((t) => `SELECT instance_id FROM ${t}`).join(' UNION ');
    const { rows: foreign } = await client.query<{ instance_id: string }>(`SELECT instance_id FROM (${union}) x WHERE NOT (instance_id = ANY ($1::text[])) LIMIT 5`, [source.instanceIds]);
    if (foreign.length > 0) throw refused(`it holds instances that are not in this data dir (${foreign.map((r) => r.instance_id).join(', ')})`);
    const { rows: runs } = await client.query<{ runs: number }>('UPDATE files_migration SET runs = runs + 1, data_dir = $1 WHERE id = 1 RETURNING runs', [source.dataDir]);
    const { rows } = await client.query<{ instance_id: string; done: string[] }>('SELECT instance_id, done FROM files_migration_instances');
    const done = new Map(rows.map((r) => [r.instance_id, new Set(r.done.filter((k): k is Kind => (KINDS as readonly string[]).includes(k)))]));
    const gatewayDone = new Set(m.done.filter((k): k is GatewayKind => (GATEWAY_KINDS as readonly string[]).includes(k)));
    return { state: 'resumed', done, gatewayDone, runs: runs[0]?.runs ?? m.runs + 1 };
  });
}

/** Records that a kind of an instance was copied whole. */
export async function markDone(db: Db, instanceId: string, kind: Kind): Promise<void> {
  await db.query(
    'the migration record',
    `INSERT INTO files_migration_instances AS p (instance_id, done) VALUES ($1, ARRAY[$2::text])
    ON CONFLICT (instance_id) DO UPDATE SET done = CASE WHEN $2 = ANY (p.done) THEN p.done ELSE array_append(p.done, $2) END`,
    [instanceId, kind],
  );
}

/**
 * Forgets what was copied of these instances (and of the gateway-wide kinds with `gateway`): the
 * files changed since (a daemon ran on them between two runs), so the next run copies them again.
 */
export async function forgetDone(db: Db, instanceIds: readonly string[], gateway: boolean): Promise<void> {
  if (instanceIds.length > 0) await db.query('the migration record', 'UPDATE files_migration_instances SET done = ARRAY[]::text[] WHERE instance_id = ANY ($1::text[])', [instanceIds]);
  if (gateway) await db.query('the migration record', 'UPDATE files_migration SET done = ARRAY[]::text[] WHERE id = 1');
}

/** Records that a gateway-wide kind was copied whole. */
export async function markGatewayDone(db: Db, kind: GatewayKind): Promise<void> {
  await db.query('the migration record', 'UPDATE files_migration SET done = CASE WHEN $1::text = ANY (done) THEN done ELSE array_append(done, $1::text) END WHERE id = 1', [kind]);
}

export interface GatewaySettings {
  serverSecretHash: string;
  retiringSecretHash: string | null;
  clusterSecretHash: string;
  settings: Record<string, unknown>;
}

/**
 * The last step, one transaction: the gateway record (nodes can start from now on) and the
 * migration marked complete, keeping the cluster secret until `secretShown`.
 */
export async function completeMigration(db: Db, gateway: GatewaySettings, clusterSecret: string): Promise<void> {
  await db.transaction('the gateway record', async (client) => {
    const { rowCount } = await client.query(
      'INSERT INTO gateway (id, server_secret_hash, retiring_secret_hash, cluster_secret_hash, settings) VALUES (1, $1, $2, $3, $4) ON CONFLICT (id) DO NOTHING',
      [gateway.serverSecretHash, gateway.retiringSecretHash, gateway.clusterSecretHash, JSON.stringify(gateway.settings)],
    );
    if (rowCount === 0) throw refused('a gateway was created in it while the migration ran (`gateway init --database`?)');
    await client.query('UPDATE files_migration SET completed_at = now(), cluster_secret = $1 WHERE id = 1', [clusterSecret]);
  });
}

/** The cluster secret was printed: it is no longer kept. */
export async function secretShown(db: Db): Promise<void> {
  await db.query('the migration record', 'UPDATE files_migration SET cluster_secret = NULL WHERE id = 1');
}
