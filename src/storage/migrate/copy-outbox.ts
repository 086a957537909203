import { stateOf, type DeliveryState, type OutboxStore } from '../ports/outbox.js';
import type { Db } from '../postgres/db.js';

export interface OutboxCopied {
  deliveries: number;
  pending: number;
}

/**
 * An instance's webhook outbox: every delivery the files engine keeps (pending ones with their
 * schedule, and the finished history), each with its event, stored once, as the PostgreSQL
 * engine's `deliveries` rows hold them (see postgres/outbox.ts). A delivery keeps its id, which is
 * its `webhook-id` header, so a receiver that saw an attempt before recognises a later one.
 */
export async function copyOutbox(db: Db, from: OutboxStore, instanceId: string): Promise<OutboxCopied> {
  const { deliveries } = await from.list(instanceId);
  // Oldest first: the order they were stored in.
  const ordered: DeliveryState[] = [...deliveries].reverse();
  let pending = 0;
  for (const d of ordered) {
    const event = await from.readEvent(instanceId, d.id);
    if (!event) throw new Error(`the event of webhook delivery ${d.id} of ${instanceId} is gone from the outbox journal`);
    const state = stateOf(d);
    await db.query(
      'webhook outbox',
      `INSERT INTO deliveries (instance_id, id, seq, type, lane, created_at, status, state, event, finished_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (instance_id, id) DO UPDATE SET seq = excluded.seq, type = excluded.type, lane = excluded.lane, created_at = excluded.created_at,
         status = excluded.status, state = excluded.state, event = excluded.event, finished_at = excluded.finished_at`,
      [instanceId, state.id, state.seq, state.type, state.lane, state.createdAt, state.status, JSON.stringify(state), JSON.stringify(event), state.finishedAt],
    );
    if (state.status === 'pending') pending += 1;
  }
  await db.query('webhook outbox', 'DELETE FROM deliveries WHERE instance_id = $1 AND NOT (id = ANY ($2::text[]))', [instanceId, ordered.map((d) => d.id)]);
  return { deliveries: ordered.length, pending };
}
