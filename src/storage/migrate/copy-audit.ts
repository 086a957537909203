import type { AuditEntry, AuditLog } from '../ports/audit.js';
import type { Db } from '../postgres/db.js';

/** Entries per page read from the files, and per statement. */
const PAGE = 1_000;

/** The log's pages as the engine reads them (its own reader: what a query shows), newest first. */
async function* pages(from: AuditLog): AsyncGenerator<AuditEntry[]> {
  let cursor: string | undefined;
  do {
    const page = await from.query({ limit: PAGE, ...(cursor !== undefined ? { cursor } : {}) });
    if (page.entries.length > 0) yield page.entries;
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
}

/** How many entries the log holds. */
export async function countAudit(from: AuditLog): Promise<number> {
  let n = 0;
  for await (const page of pages(from)) n += page.length;
  return n;
}

/**
 * The audit log (gateway-wide) into the PostgreSQL engine's `audit` table, each entry with its own
 * time. The key is `seq`, the entry's place in the files' log counted from the oldest (1 = the
 * oldest): the engine shows the log in `seq` order, so the order is the files' order, and a resumed
 * run writes each entry onto its own row again (nothing twice). Rows past the log's end are
 * removed, and the table's sequence is set past the last one, so entries a node appends later come
 * after them.
 */
export async function copyAudit(db: Db, from: AuditLog): Promise<number> {
  // Read newest first (the port's order): the places are counted down from the total.
  const total = await countAudit(from);
  let seq = total;
  for await (const page of pages(from)) {
    const seqs = page.map(() => seq--);
    await db.query(
      'audit log',
      `INSERT INTO audit (seq, at, actor, action, instance_id, target, outcome) OVERRIDING SYSTEM VALUE
      SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
      ON CONFLICT (seq) DO UPDATE SET at = excluded.at, actor = excluded.actor, action = excluded.action,
        instance_id = excluded.instance_id, target = excluded.target, outcome = excluded.outcome`,
      [seqs, page.map((e) => e.at), page.map((e) => e.actor), page.map((e) => e.action), page.map((e) => e.instanceId ?? null), page.map((e) => e.target ?? null), page.map((e) => e.outcome)],
    );
  }
  if (seq !== 0) throw new Error(`the audit log changed while it was copied (${total} entries counted, ${total - seq} read)`);
  await db.query('audit log', 'DELETE FROM audit WHERE seq > $1', [total]);
  if (total > 0) await db.query('audit log', "SELECT setval(pg_get_serial_sequence('audit', 'seq'), $1)", [total]);
  return total;
}
