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

interface Row {
  state: DeliveryState;
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

  constructor(private readonly db: Db) {}

  private write<T>(instanceId: string, op: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(instanceId) ?? Promise.resolve();
    const run = prev.then(op, op);
    const tail = run.catch(() => undefined);
    this.tails.set(instanceId, tail);
    void tail.then(() => {
      if (this.tails.get(instanceId) === tail) this.tails.delete(instanceId);
    });
    return run;
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
    const state = stateOf(record);
    await this.write(record.instanceId, () => this.db.query(
      'webhook outbox',
      `INSERT INTO deliveries (instance_id, id, seq, type, lane, created_at, status, state, event, finished_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (instance_id, id) DO NOTHING`,
      [record.instanceId, record.id, record.seq, record.type, record.lane, record.createdAt, record.status, JSON.stringify(state), JSON.stringify(record.event), record.finishedAt],
    ));
  }

  async readEvent(instanceId: string, deliveryId: string): Promise<GatewayEvent | null> {
    await this.settled(instanceId);
    const { rows } = await this.db.query<{ event: string }>('webhook outbox', 'SELECT event FROM deliveries WHERE instance_id = $1 AND id = $2', [instanceId, deliveryId]);
    return rows[0] ? (JSON.parse(rows[0].event) as GatewayEvent) : null;
  }

  async saveOutcome(instanceId: string, patch: DeliveryPatch, options: { durable: boolean }): Promise<void> {
    const p = patchOf(patch);
    await this.write(instanceId, () => this.db.query(
      'webhook outbox',
      `UPDATE deliveries SET seq = $3, status = $4, finished_at = $5, state = state || $6::jsonb WHERE instance_id = $1 AND id = $2`,
      [instanceId, p.id, p.seq, p.status, p.finishedAt, JSON.stringify(p)],
      !options.durable,
    ));
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
    const { rows } = await this.write(instanceId, () => this.db.query<Row & { was: DeliveryStatus }>(
      'webhook outbox',
      `UPDATE deliveries d SET seq = CASE WHEN d.status = 'pending' THEN d.seq ELSE $3 END,
         finished_at = CASE WHEN d.status = 'pending' THEN d.finished_at ELSE NULL END,
         status = 'pending',
         state = CASE WHEN d.status = 'pending' THEN d.state ELSE d.state || jsonb_build_object(
           'seq', $3::bigint, 'status', 'pending', 'attempts', 0, 'lastError', NULL, 'lastStatus', NULL,
           'nextAttemptAt', $4::text, 'deliveredAt', NULL, 'finishedAt', NULL,
           'redeliveries', (d.state->>'redeliveries')::int + 1) END
       FROM (SELECT status AS was FROM deliveries WHERE instance_id = $1 AND id = $2 FOR UPDATE) old
       WHERE d.instance_id = $1 AND d.id = $2
       RETURNING d.state, old.was`,
      [instanceId, deliveryId, options.seq, options.at],
    ));
    const r = rows[0];
    if (!r) return { outcome: 'not-found' };
    return { outcome: r.was === 'pending' ? 'already-pending' : 'requeued', state: r.state };
  }

  async pruneHistory(instanceId: string, keep: number): Promise<void> {
    await this.write(instanceId, () => this.db.query(
      'webhook outbox',
      `DELETE FROM deliveries WHERE instance_id = $1 AND status <> 'pending' AND id IN (
         SELECT id FROM deliveries WHERE instance_id = $1 AND status <> 'pending' ORDER BY finished_at DESC NULLS LAST, id DESC OFFSET $2)`,
      [instanceId, keep],
      true,
    ));
  }

  async removeInstance(instanceId: string): Promise<void> {
    await this.write(instanceId, () => this.db.query('webhook outbox', 'DELETE FROM deliveries WHERE instance_id = $1', [instanceId]));
  }

  async close(): Promise<void> {
    await Promise.all([...this.tails.values()]);
  }
}
