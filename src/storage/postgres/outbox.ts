import type { GatewayEvent } from '../../events/types.js';
import {
  isDeliveryId,
  patchOf,
  stateOf,
  type DeliveryListing,
  type DeliveryPatch,
  type DeliveryRecord,
  type DeliveryState,
  type DeliveryStatus,
  type OutboxStore,
  type RequeueResult,
} from '../ports/outbox.js';
import type { Db } from './db.js';
import type { LeaseEpochs } from './lease-epochs.js';

interface Row {
  state: DeliveryState;
}

/** Appends and outcomes written together (see PgOutbox.open). */
interface Batch {
  appends: DeliveryRecord[];
  /** By delivery id: the merged patch of every outcome of it in the batch. */
  outcomes: Map<string, ReturnType<typeof patchOf>>;
  /** Anything in it must be flushed to disk before it resolves. */
  durable: boolean;
  /** The lease epoch its writes were made under (migration 011): one a batch. */
  epoch: number | null;
  done: Promise<void>;
}

/**
 * The webhook outbox in PostgreSQL: a delivery is one row (its event stored once as text, its
 * state as JSON, the fields the queue sorts and prunes by in columns of their own), so an outcome
 * is one row update and any node can list an instance's deliveries. A lazy outcome (a retry's
 * schedule) is written without waiting for the WAL flush; losing it in a crash means one attempt
 * sooner, which at-least-once allows.
 */
export class PgOutbox implements OutboxStore {
  /**
   * Each instance's writes run one after another, in the order they were made, and its reads wait
   * for the writes made before them: what a caller wrote (even without waiting) is what it reads,
   * as with the files engine, and a delivery's outcomes are never applied out of order.
   */
  private readonly tails = new Map<string, Promise<unknown>>();
  /**
   * Each instance's batch of appends and outcomes not yet started: what arrives while the
   * statement before it runs joins it, so a burst is a few multi-row statements (one commit each)
   * instead of one statement and commit per delivery (a group commit, as the files engine does).
   * One at a time per instance bounded a burst at ~330 deliveries/s, the commit latency.
   */
  private readonly open = new Map<string, Batch>();
  /** Deliveries finished per instance since its last prune (see pruneHistory). */
  private readonly finishedSincePrune = new Map<string, number>();

  constructor(
    private readonly db: Db,
    /** The lease epoch each write carries (migration 011). */
    private readonly epochs: LeaseEpochs,
  ) {}

  private write<T>(instanceId: string, op: () => Promise<T>): Promise<T> {
    // A write that is not batched closes the open batch: what comes after it goes after it.
    this.open.delete(instanceId);
    return this.chain(instanceId, op);
  }

  private chain<T>(instanceId: string, op: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(instanceId) ?? Promise.resolve();
    const run = prev.then(op, op);
    const tail = run.catch(() => undefined);
    this.tails.set(instanceId, tail);
    void tail.then(() => {
      if (this.tails.get(instanceId) === tail) this.tails.delete(instanceId);
    });
    return run;
  }

  /** Adds to the instance's open batch (a new one queued behind the writes before it). */
  private batched(instanceId: string, add: (batch: Batch) => void): Promise<void> {
    const epoch = this.epochs.of(instanceId);
    let batch = this.open.get(instanceId);
    // Writes of another epoch (the lease left and came back) go in a batch of their own, after it.
    if (!batch || batch.epoch !== epoch) {
      const created: Batch = { appends: [], outcomes: new Map(), durable: false, epoch, done: Promise.resolve() };
      created.done = this.chain(instanceId, () => {
        if (this.open.get(instanceId) === created) this.open.delete(instanceId);
        return this.flush(instanceId, created);
      });
      this.open.set(instanceId, created);
      batch = created;
    }
    add(batch);
    return batch.done;
  }

  /** One statement for the whole batch: new rows, then outcomes (of rows already stored). */
  private async flush(instanceId: string, batch: Batch): Promise<void> {
    const a = batch.appends;
    const o = [...batch.outcomes.values()];
    await this.db.query(
      'webhook outbox',
      `WITH ins AS (
        INSERT INTO deliveries (instance_id, id, seq, type, lane, created_at, status, state, event, finished_at, lease_epoch)
        SELECT $1, x.id, x.seq, x.type, x.lane, x.created_at, x.status, x.state::jsonb, x.event, x.finished_at, $16::bigint
        FROM unnest($2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[])
          WITH ORDINALITY AS x(id, seq, type, lane, created_at, status, state, event, finished_at, o)
        ORDER BY x.o
        ON CONFLICT (instance_id, id) DO NOTHING)
      UPDATE deliveries d SET seq = u.seq, status = u.status, finished_at = u.finished_at, state = d.state || u.patch::jsonb, lease_epoch = $16::bigint
      FROM unnest($11::text[], $12::bigint[], $13::text[], $14::text[], $15::text[]) AS u(id, seq, status, finished_at, patch)
      WHERE d.instance_id = $1 AND d.id = u.id`,
      [
        instanceId,
        a.map((r) => r.id),
        a.map((r) => r.seq),
        a.map((r) => r.type),
        a.map((r) => r.lane),
        a.map((r) => r.createdAt),
        a.map((r) => r.status),
        a.map((r) => JSON.stringify(stateOf(r))),
        a.map((r) => JSON.stringify(r.event)),
        a.map((r) => r.finishedAt),
        o.map((p) => p.id),
        o.map((p) => p.seq),
        o.map((p) => p.status),
        o.map((p) => p.finishedAt),
        o.map((p) => JSON.stringify(p)),
        batch.epoch,
      ],
      !batch.durable,
    );
  }

  private async settled(instanceId: string): Promise<void> {
    await this.tails.get(instanceId);
  }

  async instances(): Promise<string[]> {
    const { rows } = await this.db.query<{ instance_id: string }>('webhook outbox', 'SELECT DISTINCT instance_id FROM deliveries');
    return rows.map((r) => r.instance_id);
  }

  async loadPending(instanceId: string): Promise<{ deliveries: DeliveryState[]; lastSeq: number }> {
    await this.settled(instanceId);
    const { rows } = await this.db.query<Row>('webhook outbox', `SELECT state FROM deliveries WHERE instance_id = $1 AND status = 'pending' ORDER BY seq, created_at`, [instanceId]);
    const last = await this.db.query<{ seq: number | null }>('webhook outbox', 'SELECT max(seq) AS seq FROM deliveries WHERE instance_id = $1', [instanceId]);
    return { deliveries: rows.map((r) => r.state), lastSeq: last.rows[0]?.seq ?? 0 };
  }

  async append(record: DeliveryRecord): Promise<void> {
    await this.batched(record.instanceId, (batch) => {
      batch.appends.push(record);
      batch.durable = true;
    });
  }

  async readEvent(instanceId: string, deliveryId: string): Promise<GatewayEvent | null> {
    await this.settled(instanceId);
    const { rows } = await this.db.query<{ event: string }>('webhook outbox', 'SELECT event FROM deliveries WHERE instance_id = $1 AND id = $2', [instanceId, deliveryId]);
    return rows[0] ? (JSON.parse(rows[0].event) as GatewayEvent) : null;
  }

  async saveOutcome(instanceId: string, patch: DeliveryPatch, options: { durable: boolean }): Promise<void> {
    const p = patchOf(patch);
    const count = this.finishedSincePrune.get(instanceId);
    if (count !== undefined && p.status !== 'pending') this.finishedSincePrune.set(instanceId, count + 1);
    await this.batched(instanceId, (batch) => {
      // Two outcomes of one delivery in a batch: the later one's fields win, as `state || patch` twice would.
      const before = batch.outcomes.get(p.id);
      batch.outcomes.set(p.id, before ? { ...before, ...p } : p);
      if (options.durable) batch.durable = true;
    });
  }

  async list(instanceId: string, options: { status?: DeliveryStatus; limit?: number } = {}): Promise<DeliveryListing> {
    await this.settled(instanceId);
    const counts = await this.db.query<{ status: DeliveryStatus; n: number }>('webhook outbox', 'SELECT status, count(*)::int AS n FROM deliveries WHERE instance_id = $1 GROUP BY status', [instanceId]);
    const { rows } = await this.db.query<Row>(
      'webhook outbox',
      `SELECT state FROM deliveries WHERE instance_id = $1 AND ($2::text IS NULL OR status = $2) ORDER BY created_at DESC, id DESC LIMIT $3`,
      [instanceId, options.status ?? null, options.limit ?? 1_000_000],
    );
    const c: Record<DeliveryStatus, number> = { pending: 0, delivered: 0, failed: 0 };
    for (const r of counts.rows) c[r.status] = r.n;
    return { counts: c, deliveries: rows.map((r) => r.state) };
  }

  async requeue(instanceId: string, deliveryId: string, options: { seq: number; at: string }): Promise<RequeueResult> {
    if (!isDeliveryId(deliveryId)) return { outcome: 'not-found' };
    const epoch = this.epochs.of(instanceId);
    const { rows } = await this.write(instanceId, () => this.db.query<Row & { was: DeliveryStatus }>(
      'webhook outbox',
      `UPDATE deliveries d SET seq = CASE WHEN d.status = 'pending' THEN d.seq ELSE $3 END,
         finished_at = CASE WHEN d.status = 'pending' THEN d.finished_at ELSE NULL END,
         status = 'pending', lease_epoch = $5::bigint,
         state = CASE WHEN d.status = 'pending' THEN d.state ELSE d.state || jsonb_build_object(
           'seq', $3::bigint, 'status', 'pending', 'attempts', 0, 'lastError', NULL, 'lastStatus', NULL,
           'nextAttemptAt', $4::text, 'deliveredAt', NULL, 'finishedAt', NULL,
           'redeliveries', (d.state->>'redeliveries')::int + 1) END
       FROM (SELECT status AS was FROM deliveries WHERE instance_id = $1 AND id = $2 FOR UPDATE) old
       WHERE d.instance_id = $1 AND d.id = $2
       RETURNING d.state, old.was`,
      [instanceId, deliveryId, options.seq, options.at, epoch],
    ));
    const r = rows[0];
    if (!r) return { outcome: 'not-found' };
    return { outcome: r.was === 'pending' ? 'already-pending' : 'requeued', state: r.state };
  }

  async pruneHistory(instanceId: string, keep: number): Promise<void> {
    // The queue asks after every finished delivery; the statement reads the instance's finished
    // deliveries past `keep` (282 µs, more than the delivery's own writes), so it runs once enough
    // have finished since the last one: the history stays within keep + max(10, keep / 10), as the
    // port allows. The first call after a start always runs.
    const finished = this.finishedSincePrune.get(instanceId);
    if (finished !== undefined && finished < Math.max(10, Math.floor(keep / 10))) return;
    this.finishedSincePrune.set(instanceId, 0);
    // Not a write that orders others: appends and outcomes still join the open batch.
    await this.chain(instanceId, () => this.db.query(
      'webhook outbox',
      `DELETE FROM deliveries WHERE instance_id = $1 AND status <> 'pending' AND id IN (
         SELECT id FROM deliveries WHERE instance_id = $1 AND status <> 'pending' ORDER BY finished_at DESC NULLS LAST, id DESC OFFSET $2)`,
      [instanceId, keep],
      true,
    ));
  }

  async removeInstance(instanceId: string): Promise<void> {
    this.finishedSincePrune.delete(instanceId);
    await this.write(instanceId, () => this.db.query('webhook outbox', 'DELETE FROM deliveries WHERE instance_id = $1', [instanceId]));
  }

  async close(): Promise<void> {
    await Promise.all([...this.tails.values()]);
  }
}
