import type { Logger } from 'pino';
import { errorMessage } from '../domain/errors.js';
import type { ConnectionStatus } from '../domain/types.js';
import type { Db } from '../storage/postgres/db.js';
import { LIVE_SESSIONS } from '../storage/postgres/session-sql.js';

/** What the lease manager does with the instances it gains and loses. */
export interface LeaseHooks {
  /** This node owns the instance now (since `epoch`): open its connection. */
  acquired(instanceId: string, epoch: number): void;
  /** This node no longer owns it (handed over, or fenced): close its connection; resolves once closed. */
  lost(instanceId: string): Promise<void>;
  /** Every instance id in service (the ones to be owned by some node). */
  instanceIds(): string[];
}

export interface LeaseOptions {
  db: Db;
  nodeId: string;
  advertiseUrl: string;
  ttlMs: number;
  logger: Logger;
  hooks: LeaseHooks;
  /** This process' database session number (its liveness lock), and whether it is up now. */
  sessionId: number;
}

export interface NodeView {
  nodeId: string;
  advertiseUrl: string;
  renewedAt: string;
  instances: number;
}

/** A lease as other nodes see it (forwarding, the admin view, the status of instances owned elsewhere). */
export interface LeaseView {
  ownerNode: string | null;
  epoch: number;
  expired: boolean;
  status: ConnectionStatus | null;
  reason: string | null;
}

/** Counters for /metrics. */
export interface LeaseCounters {
  renewals: number;
  renewalFailures: number;
  acquired: number;
  lost: number;
  handedOver: number;
}

/**
 * Each instance is owned by one node at a time through a lease (owner, epoch, expiry) in the
 * database. Every tick (a fifth of the TTL) this node renews its leases, says it is alive, takes
 * instances that have no owner, whose lease expired, or whose owner's process is gone (its
 * session lock was released: a kill -9 frees it at once), up to its fair share of the live nodes,
 * and hands over what it holds beyond that share. A node that could not renew for half the TTL
 * closes every WhatsApp socket at once (self-fencing), so two nodes never hold one device; the
 * database refuses its writes after that anyway (the fencing trigger, migration 003).
 */
export class LeaseManager {
  /** Instances owned here, with their epoch. */
  readonly owned = new Map<string, number>();
  /** The lease table as last read (every tick): owner and status of every instance. */
  private view = new Map<string, LeaseView>();
  private nodes: NodeView[] = [];
  private timer: NodeJS.Timeout | null = null;
  private watchdog: NodeJS.Timeout | null = null;
  private lastRenewOk = performance.now();
  /** When this node's database session last reconnected (-Infinity: never; see step 3 of a tick). */
  private sessionUpSince = Number.NEGATIVE_INFINITY;
  private running = false;
  private ticking: Promise<void> | null = null;
  readonly counters: LeaseCounters = { renewals: 0, renewalFailures: 0, acquired: 0, lost: 0, handedOver: 0 };
  private readonly statusQueue = new Map<string, { status: ConnectionStatus; reason: string | null; epoch: number }>();
  private statusFlush: NodeJS.Timeout | null = null;

  constructor(private readonly options: LeaseOptions) {}

  private get tickMs(): number {
    return Math.max(500, Math.floor(this.options.ttlMs / 5));
  }

  /** Registers the node, takes its first instances, and keeps doing so every tick. */
  async start(): Promise<void> {
    this.running = true;
    await this.registerNode();
    await this.tick();
    this.timer = setInterval(() => void this.tick(), this.tickMs);
    this.timer.unref();
    // Checked more often than a tick: after a SIGSTOP or a blocked loop this runs first.
    this.watchdog = setInterval(() => this.fenceIfStale(), Math.max(250, Math.floor(this.options.ttlMs / 20)));
    this.watchdog.unref();
  }

  /** The database connection of the session was lost and came back: changes may have been missed. */
  sessionRestarted(): void {
    this.sessionUpSince = performance.now();
  }

  /** Whether this node owns the instance now. */
  owns(instanceId: string): boolean {
    return this.owned.has(instanceId);
  }

  /** Who owns an instance, as the last tick read it (null: nobody, or unknown). */
  lease(instanceId: string): LeaseView | null {
    return this.view.get(instanceId) ?? null;
  }

  /** The live nodes as the last tick read them. */
  liveNodes(): readonly NodeView[] {
    return this.nodes;
  }

  /** Where a node is reached. */
  urlOf(nodeId: string): string | null {
    return this.nodes.find((n) => n.nodeId === nodeId)?.advertiseUrl ?? null;
  }

  /** Reads the lease of one instance now (a request waiting for an instance that moves). */
  async refresh(instanceId: string): Promise<LeaseView | null> {
    const { rows } = await this.options.db.query<{ owner_node: string | null; epoch: number; expired: boolean; status: ConnectionStatus | null; reason: string | null }>(
      'reading a lease',
      'SELECT owner_node, epoch, expires_at < now() AS expired, status, reason FROM leases WHERE instance_id = $1',
      [instanceId],
    );
    const r = rows[0];
    if (!r) return null;
    const v: LeaseView = { ownerNode: r.owner_node, epoch: r.epoch, expired: r.expired, status: r.status, reason: r.reason };
    this.view.set(instanceId, v);
    return v;
  }

  /** A new instance created on this node: take its lease at once (its connection starts here). */
  async claim(instanceId: string): Promise<boolean> {
    const { db, nodeId, ttlMs } = this.options;
    const { rows } = await db.query<{ epoch: number }>(
      'taking a lease',
      `INSERT INTO leases (instance_id, owner_node, epoch, expires_at) VALUES ($1, $2, 1, now() + $3 * interval '1 millisecond')
       ON CONFLICT (instance_id) DO UPDATE SET owner_node = $2, epoch = leases.epoch + 1, expires_at = now() + $3 * interval '1 millisecond'
         WHERE leases.owner_node IS NULL OR leases.expires_at < now()
       RETURNING epoch`,
      [instanceId, nodeId, ttlMs],
    );
    if (!rows[0]) return false;
    this.owned.set(instanceId, rows[0].epoch);
    this.ownView(instanceId, rows[0].epoch);
    this.counters.acquired += 1;
    return true;
  }

  /** The connection of an owned instance changed status: other nodes show it (written lazily). */
  reportStatus(instanceId: string, status: ConnectionStatus, reason: string | null): void {
    const epoch = this.owned.get(instanceId);
    if (epoch === undefined) return;
    this.statusQueue.set(instanceId, { status, reason, epoch });
    this.statusFlush ??= setTimeout(() => {
      this.statusFlush = null;
      void this.flushStatuses();
    }, 200);
  }

  private async flushStatuses(): Promise<void> {
    const batch = [...this.statusQueue];
    this.statusQueue.clear();
    if (batch.length === 0) return;
    await this.options.db
      .query(
        'writing connection statuses',
        // Only under the epoch the status was seen in: a tenure that ended does not label the next.
        `UPDATE leases l SET status = u.status, reason = u.reason FROM unnest($1::text[], $2::text[], $3::text[], $5::bigint[]) AS u(id, status, reason, epoch)
         WHERE l.instance_id = u.id AND l.owner_node = $4 AND l.epoch = u.epoch`,
        [batch.map(([id]) => id), batch.map(([, s]) => s.status), batch.map(([, s]) => s.reason), this.options.nodeId, batch.map(([, s]) => s.epoch)],
        true,
      )
      .catch((err: unknown) => this.options.logger.debug({ err: errorMessage(err) }, 'could not write connection statuses'));
  }

  private async registerNode(): Promise<void> {
    const { db, nodeId, advertiseUrl, sessionId } = this.options;
    await db.query(
      'registering this node',
      `INSERT INTO nodes (node_id, advertise_url, session_id) VALUES ($1, $2, $3)
       ON CONFLICT (node_id) DO UPDATE SET advertise_url = $2, session_id = $3, started_at = now(), renewed_at = now(), stopped = false`,
      [nodeId, advertiseUrl, sessionId],
    );
  }

  /** Self-fencing: no renewal for half the TTL closes every socket before the leases can expire. */
  private fenceIfStale(): void {
    if (!this.running || this.owned.size === 0) return;
    const since = performance.now() - this.lastRenewOk;
    if (since < this.options.ttlMs / 2) return;
    const ids = [...this.owned.keys()];
    this.owned.clear();
    this.options.logger.error({ instances: ids.length, sinceRenewMs: Math.round(since) }, 'leases not renewed for half their TTL: closing every WhatsApp socket of this node (another node takes them over)');
    this.counters.lost += ids.length;
    for (const id of ids) void this.options.hooks.lost(id);
  }

  private tick(): Promise<void> {
    if (!this.running) return Promise.resolve();
    this.ticking ??= this.tickNow()
      .catch((err: unknown) => {
        this.counters.renewalFailures += 1;
        this.options.logger.warn({ err: errorMessage(err) }, 'lease tick failed; retried at the next one');
      })
      .finally(() => {
        this.ticking = null;
      });
    return this.ticking;
  }

  private async tickNow(): Promise<void> {
    this.fenceIfStale();
    const { db, nodeId, ttlMs, logger, hooks } = this.options;
    const started = performance.now();
    // 1. Renew what we hold; what did not renew was taken (we stalled) or released.
    const renewed = await db.query<{ instance_id: string; epoch: number }>(
      'renewing leases',
      `WITH n AS (UPDATE nodes SET renewed_at = now(), stopped = false WHERE node_id = $1)
       UPDATE leases SET expires_at = now() + $2 * interval '1 millisecond' WHERE owner_node = $1 RETURNING instance_id, epoch`,
      [nodeId, ttlMs],
    );
    this.lastRenewOk = started;
    this.counters.renewals += 1;
    const held = new Map(renewed.rows.map((r) => [r.instance_id, r.epoch]));
    for (const [id, epoch] of [...this.owned]) {
      if (held.get(id) === epoch) continue;
      this.owned.delete(id);
      this.counters.lost += 1;
      logger.warn({ instanceId: id }, 'lease lost to another node: closing the connection here');
      await hooks.lost(id);
    }
    // A lease this node holds but does not run (a restart of this node): run it.
    for (const [id, epoch] of held) {
      if (this.owned.has(id)) continue;
      this.owned.set(id, epoch);
      hooks.acquired(id, epoch);
    }

    // 2. The others: live nodes, and every lease.
    const nodes = await db.query<{ node_id: string; advertise_url: string; renewed_at: Date; session_id: number | null; live: boolean }>(
      'reading nodes',
      `SELECT node_id, advertise_url, renewed_at, session_id,
         (NOT stopped AND renewed_at > now() - $1 * interval '1 millisecond') AS live
       FROM nodes`,
      [ttlMs],
    );
    const leases = await db.query<{ instance_id: string; owner_node: string | null; epoch: number; expired: boolean; status: ConnectionStatus | null; reason: string | null }>(
      'reading leases',
      'SELECT instance_id, owner_node, epoch, expires_at < now() AS expired, status, reason FROM leases',
    );
    const view = new Map<string, LeaseView>();
    const counts = new Map<string, number>();
    for (const r of leases.rows) {
      view.set(r.instance_id, { ownerNode: r.owner_node, epoch: r.epoch, expired: r.expired, status: r.status, reason: r.reason });
      if (r.owner_node && !r.expired) counts.set(r.owner_node, (counts.get(r.owner_node) ?? 0) + 1);
    }
    this.view = view;
    const live = nodes.rows.filter((n) => n.live);
    this.nodes = live.map((n) => ({ nodeId: n.node_id, advertiseUrl: n.advertise_url, renewedAt: n.renewed_at.toISOString(), instances: counts.get(n.node_id) ?? 0 }));

    // 3. Owners whose process is gone: their session lock was released (a kill -9 frees it at
    // once). Trusted only when neither the database nor this node's own session restarted within a
    // TTL: after a database restart every session is new, and the others are still reconnecting.
    const dead = new Set<string>();
    const pgUp = await db.query<{ up_ms: number }>('reading the database start', 'SELECT (extract(epoch FROM now() - pg_postmaster_start_time()) * 1000)::bigint AS up_ms');
    if (performance.now() - this.sessionUpSince >= ttlMs && (pgUp.rows[0]?.up_ms ?? 0) >= ttlMs) {
      const alive = await db.query<{ session: number }>('reading live sessions', LIVE_SESSIONS);
      const sessions = new Set(alive.rows.map((r) => Number(r.session)));
      for (const n of nodes.rows) if (n.node_id !== nodeId && n.session_id !== null && !sessions.has(Number(n.session_id))) dead.add(n.node_id);
    }

    // 4. Fair share of the live nodes (this one counted even if its row was just written).
    const ids = hooks.instanceIds();
    const liveCount = Math.max(1, live.filter((n) => n.node_id !== nodeId && !dead.has(n.node_id)).length + 1);
    const share = Math.ceil(ids.length / liveCount);
    if (this.owned.size < share) {
      const free = ids.filter((id) => {
        if (this.owned.has(id)) return false;
        const v = view.get(id);
        return !v || v.ownerNode === null || v.expired || dead.has(v.ownerNode);
      });
      const want = free.slice(0, share - this.owned.size);
      if (want.length > 0) await this.acquire(want, [...dead]);
    } else if (this.owned.size > share + 1 || (this.owned.size > share && this.nodes.some((n) => n.nodeId !== nodeId && n.instances < share - 1))) {
      // Hand over the excess, a few per tick, so a node that joins gets its share gradually.
      const excess = [...this.owned.keys()].slice(0, Math.min(this.owned.size - share, 8));
      for (const id of excess) await this.handOver(id);
    }
  }

  private async acquire(ids: string[], deadNodes: string[]): Promise<void> {
    const { db, nodeId, ttlMs, logger, hooks } = this.options;
    const { rows } = await db.query<{ instance_id: string; epoch: number }>(
      'taking leases',
      `INSERT INTO leases (instance_id, owner_node, epoch, expires_at)
         SELECT id, $2, 1, now() + $3 * interval '1 millisecond' FROM unnest($1::text[]) AS u(id)
       ON CONFLICT (instance_id) DO UPDATE SET owner_node = $2, epoch = leases.epoch + 1, expires_at = now() + $3 * interval '1 millisecond', status = NULL, reason = NULL
         WHERE leases.owner_node IS NULL OR leases.expires_at < now() OR leases.owner_node = ANY ($4::text[])
       RETURNING instance_id, epoch`,
      [ids, nodeId, ttlMs, deadNodes],
    );
    if (rows.length > 0) logger.info({ instances: rows.length }, 'took over instances');
    for (const r of rows) {
      this.owned.set(r.instance_id, r.epoch);
      this.ownView(r.instance_id, r.epoch);
      this.counters.acquired += 1;
      hooks.acquired(r.instance_id, r.epoch);
    }
  }

  /**
   * The lease as read before this node took it still names the previous owner and its last status
   * (`connected`, say) until the next tick; shown meanwhile, it would call a connection that has not
   * started here connected (a send a moment later: CONNECTION_NOT_READY). The table says this now.
   */
  private ownView(instanceId: string, epoch: number): void {
    this.view.set(instanceId, { ownerNode: this.options.nodeId, epoch, expired: false, status: null, reason: null });
  }

  /** Hands one instance over: its socket closes first, then the lease is freed for another node. */
  private async handOver(instanceId: string): Promise<void> {
    const epoch = this.owned.get(instanceId);
    if (epoch === undefined || !this.owned.delete(instanceId)) return;
    await this.options.hooks.lost(instanceId);
    // The tenure that ends is this one: a lease taken over and back meanwhile is not freed by it.
    await this.options.db.query(
      'handing over a lease',
      'UPDATE leases SET owner_node = NULL, expires_at = now(), status = NULL, reason = NULL WHERE instance_id = $1 AND owner_node = $2 AND epoch = $3',
      [instanceId, this.options.nodeId, epoch],
    );
    this.counters.handedOver += 1;
  }

  /** A clean stop: every socket is closed already; the leases are freed at once for the others. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearInterval(this.timer);
    if (this.watchdog) clearInterval(this.watchdog);
    if (this.statusFlush) clearTimeout(this.statusFlush);
    await this.ticking;
    this.owned.clear();
    await this.options.db
      .query(
        'handing over every lease',
        `WITH n AS (UPDATE nodes SET stopped = true WHERE node_id = $1)
         UPDATE leases SET owner_node = NULL, expires_at = now(), status = NULL, reason = NULL WHERE owner_node = $1`,
        [this.options.nodeId],
      )
      .catch((err: unknown) => this.options.logger.warn({ err: errorMessage(err) }, 'could not hand the leases over at stop; they expire by themselves'));
  }
}
