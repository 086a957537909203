import type { AuditEntry } from '../ports/audit.js';
import type { Db } from '../postgres/db.js';
import { sourceAuditDays } from './source-audit.js';

/** Entries per statement. */
const BATCH = 1_000;

async function insert(db: Db, first: number, entries: readonly AuditEntry[]): Promise<void> {
  await db.query(
    'audit log',
    `INSERT INTO audit (seq, at, actor, action, instance_id, target, outcome) OVERRIDING SYSTEM VALUE
    SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
    ON CONFLICT (seq) DO UPDATE SET at = excluded.at, actor = excluded.actor, action = excluded.action,
      instance_id = excluded.instance_id, target = excluded.target, outcome = excluded.outcome`,
    [
      entries.map((_, k) => first + k),
      entries.map((e) => e.at),
      entries.map((e) => e.actor),
      entries.map((e) => e.action),
      entries.map((e) => e.instanceId ?? null),
      entries.map((e) => e.target ?? null),
      entries.map((e) => e.outcome),
    ],
  );
}

/**
 * The audit log (gateway-wide, DATA_DIR/audit) into the PostgreSQL engine's `audit` table, each
 * entry with its own time. The key is `seq`, the entry's place in the files' log counted from the
 * oldest (1): the engine shows the log in `seq` order, so the order is the files' order, and a
 * resumed run writes each entry onto its own row again (nothing twice). Rows past the log's end
 * are removed, and the table's sequence is set to the last one, so entries a node appends later
 * come after them.
 */
export async function copyAudit(db: Db, auditDir: string): Promise<number> {
  let total = 0;
  for await (const day of sourceAuditDays(auditDir)) {
    for (let i = 0; i < day.length; i += BATCH) {
      const batch = day.slice(i, i + BATCH);
      await insert(db, total + 1, batch);
      total += batch.length;
    }
  }
  await db.query('audit log', 'DELETE FROM audit WHERE seq > $1', [total]);
  if (total > 0) await db.query('audit log', "SELECT setval(pg_get_serial_sequence('audit', 'seq'), $1)", [total]);
  return total;
}
