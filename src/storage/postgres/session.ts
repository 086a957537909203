import { randomInt } from 'node:crypto';
import pg from 'pg';
import type { Logger } from 'pino';
import { CHANGES, SESSION_LOCK } from './session-sql.js';

export type ChangeKind = 'instances' | 'credits' | 'gateway' | 'leases';
const KIND_CODE: Record<ChangeKind, string> = { instances: 'i', credits: 'c', gateway: 'g', leases: 'l' };

export interface SessionHandlers {
  /** Another process changed this instance's row of `kind`. */
  changed(kind: ChangeKind, instanceId: string): void;
  /** Notifications may have been missed (the connection was lost): re-read everything. */
  resync(): void;
}

/**
 * This process' presence in the database: one connection of its own that holds an advisory lock
 * named by the session number (so a hold of a process that died, whose connection and lock went
 * with it, is known to be stale) and LISTENs for what other processes change. When the connection
 * is lost it reconnects by itself (backing off up to 10 s), takes its lock again and asks for a
 * resync, since notifications sent meanwhile were missed.
 */
export class Session {
  private client: pg.Client | null = null;
  private closed = false;
  private retryMs = 250;
  private reconnecting: NodeJS.Timeout | null = null;

  /** Counts the connections that took the lock: holds stored under an earlier one may be gone. */
  private connections = 0;

  private constructor(
    readonly id: number,
    private readonly url: string,
    private readonly logger: Logger,
    private readonly handlers: SessionHandlers,
  ) {}

  static async start(url: string, logger: Logger, handlers: SessionHandlers): Promise<Session> {
    for (;;) {
      const session = new Session(randomInt(1, 2 ** 31 - 1), url, logger, handlers);
      if (await session.connect()) return session;
    }
  }

  /**
   * Which connection holds the lock now, or null while none does. While it is lost, the other
   * processes (and this one's own stale-hold sweep) may release this session's credit holds.
   */
  get generation(): number | null {
    return this.client === null || this.closed ? null : this.connections;
  }

  /** The text a change is announced with (see `pg_notify` in the writers). */
  payload(kind: ChangeKind, instanceId: string): string {
    return `${this.id}:${KIND_CODE[kind]}:${instanceId}`;
  }

  /** Connects, locks and listens; false when the session number is taken (by a live process). */
  private async connect(): Promise<boolean> {
    const client = new pg.Client({ connectionString: this.url, keepAlive: true, connectionTimeoutMillis: 10_000, application_name: 'wa-gateway session' });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    client.on('notification', (n) => this.notified(n.payload ?? ''));
    try {
      await client.connect();
      const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS locked', [SESSION_LOCK, this.id]);
      if (!rows[0]?.locked) {
        await client.end();
        return false;
      }
      await client.query(`LISTEN ${CHANGES}`);
    } catch (err) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      throw err;
    }
    this.client = client;
    this.connections += 1;
    this.retryMs = 250;
    return true;
  }

  private notified(payload: string): void {
    const first = payload.indexOf(':');
    const second = payload.indexOf(':', first + 1);
    if (first < 0 || second < 0 || Number(payload.slice(0, first)) === this.id) return;
    const code = payload.slice(first + 1, second);
    const kind = (Object.keys(KIND_CODE) as ChangeKind[]).find((k) => KIND_CODE[k] === code);
    if (kind) this.handlers.changed(kind, payload.slice(second + 1));
  }

  private lost(client: pg.Client, err: Error): void {
    if (this.client !== client || this.closed) return;
    this.client = null;
    this.logger.warn({ err: err.message }, 'the database session connection was lost; reconnecting');
    client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnecting) return;
    const wait = this.retryMs;
    this.retryMs = Math.min(10_000, this.retryMs * 2);
    this.reconnecting = setTimeout(() => {
      this.reconnecting = null;
      this.connect()
        .then((ok) => {
          if (!ok) {
            // The old connection's backend has not gone yet and still holds the lock.
            this.scheduleReconnect();
            return;
          }
          if (this.closed) void this.close();
          else this.handlers.resync();
        })
        .catch(() => this.scheduleReconnect());
    }, wait);
    this.reconnecting.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.reconnecting) clearTimeout(this.reconnecting);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}
