import pg from 'pg';
import type { Logger } from 'pino';
import { pgError } from './errors.js';

/** Row values as the engine reads them: int8 as a number (balances and epoch ms stay far below 2^53). */
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20 && format !== 'binary') return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format);
  },
};

export interface DbOptions {
  url: string;
  /** This node's id (several hosts): its writes are fenced by the instances' leases (migration 003). */
  nodeId?: string;
  /** Connections for durable writes and reads. */
  poolSize?: number;
  /** Connections for writes that may be lost in a crash (`synchronous_commit = off`). */
  lazyPoolSize?: number;
  logger: Logger;
}

export type Params = readonly unknown[];

/**
 * Statements are prepared once per connection and named by their text, up to this many distinct
 * texts (past the cap a text runs unnamed). Unnamed, each execution is parsed again: for the send
 * path that was 77 µs of a message insert's 517 µs and 65 of a status update's 231 µs on the server
 * (log_min_duration_statement over 6,086 sends, bench/pg-diag.ts). A pooler in transaction mode
 * (pgbouncer before 1.21) does not keep prepared statements: point the gateway at PostgreSQL or at a
 * pooler that does.
 *
 * Plans stay custom (`plan_cache_mode = force_custom_plan`, each execution planned with its values):
 * PostgreSQL's generic plans, made once per connection, are chosen from the statistics of the
 * moment, and on a new database's empty tables they read rows by instance alone (a status update by
 * the (instance_id, ts) index instead of the primary key; a message insert went from 0.3 to 7 ms a
 * send until autovacuum analyzed the table). Generic plans would save another ~250 µs a send; not
 * worth a gateway that is slow for its first minutes, or after a restore.
 */
const MAX_PREPARED = 400;
/** Text -> statement name, the same in every pool of the process (a name is per connection). */
const names = new Map<string, string>();

/** A node id as a connection option value: `-c` values end at a space, so ids have none. */
function nodeOption(id: string): string {
  if (!/^[A-Za-z0-9._:-]{1,100}$/.test(id)) throw new Error(`cluster.nodeId: letters, digits, ".", "_", ":" and "-" only (got ${JSON.stringify(id.slice(0, 100))})`);
  return id;
}

/**
 * The engine's connections: a pool for durable work, and a smaller one whose sessions run with
 * `synchronous_commit = off` for writes the ports allow to be lost in a crash (a message's
 * `pending` record, a `sent` status): they commit without waiting for the WAL flush, and a later
 * durable commit flushes them first, so they are never reordered. Both pools reconnect by
 * themselves; a connection that dies while idle is dropped (its error is logged, never thrown).
 */
export class Db {
  readonly pool: pg.Pool;
  readonly lazy: pg.Pool;

  constructor(readonly options: DbOptions) {
    const base = { connectionString: options.url, types, connectionTimeoutMillis: 10_000, keepAlive: true, application_name: 'wa-gateway' };
    // A node's id is a setting of each of its connections: the fencing trigger reads it.
    const node = options.nodeId ? ` -c gw.node=${nodeOption(options.nodeId)}` : '';
    const plans = '-c plan_cache_mode=force_custom_plan';
    this.pool = new pg.Pool({ ...base, max: options.poolSize ?? 10, options: `${plans}${node}` });
    this.lazy = new pg.Pool({ ...base, max: options.lazyPoolSize ?? 4, options: `-c synchronous_commit=off ${plans}${node}` });
    for (const p of [this.pool, this.lazy]) {
      p.on('error', (err) => options.logger.warn({ err: err.message }, 'an idle database connection failed; the pool opens a new one when needed'));
      // A connection that ends under a checked-out client emits 'error' where the pool listens only
      // while it is idle (or once, during pool.query): without a listener of its own, a server
      // restart would crash the process. The failure reaches the caller through its query anyway.
      p.on('connect', (client) => {
        client.on('error', (err) => options.logger.debug({ err: err.message }, 'a database connection failed'));
      });
    }
  }

  /** One statement; database outages reject with STORAGE_UNAVAILABLE naming `what`. */
  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(what: string, text: string, params: Params = [], lazy = false): Promise<pg.QueryResult<R>> {
    try {
      const name = this.nameOf(text);
      const pool = lazy ? this.lazy : this.pool;
      return await (name ? pool.query<R>({ name, text, values: params as unknown[] }) : pool.query<R>(text, params as unknown[]));
    } catch (err) {
      throw pgError(err, what);
    }
  }

  /** The prepared statement name of `text`, or undefined past the cap. */
  private nameOf(text: string): string | undefined {
    let name = names.get(text);
    if (name === undefined && names.size < MAX_PREPARED) {
      name = `gw${names.size + 1}`;
      names.set(text, name);
    }
    return name;
  }

  /** Runs `fn` in one transaction on one connection (rolled back when it throws). */
  async transaction<T>(what: string, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw pgError(err, what);
    }
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch((e: unknown) => {
        broken = e instanceof Error ? e : new Error(String(e));
      });
      throw pgError(err, what);
    } finally {
      // A connection whose rollback failed is not given back to the pool.
      client.release(broken);
    }
  }

  async end(): Promise<void> {
    await Promise.all([this.pool.end(), this.lazy.end()]);
  }
}
