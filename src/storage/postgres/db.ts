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
    this.pool = new pg.Pool({ ...base, max: options.poolSize ?? 10, ...(node ? { options: node.trim() } : {}) });
    this.lazy = new pg.Pool({ ...base, max: options.lazyPoolSize ?? 4, options: `-c synchronous_commit=off${node}` });
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
      return await (lazy ? this.lazy : this.pool).query<R>(text, params as unknown[]);
    } catch (err) {
      throw pgError(err, what);
    }
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
