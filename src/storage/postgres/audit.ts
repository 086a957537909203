import { GatewayError } from '../../domain/errors.js';
import type { AuditEntry, AuditLog, AuditPage, AuditQuery } from '../ports/audit.js';
import type { Db } from './db.js';

interface Row {
  seq: number;
  at: Date;
  actor: string;
  action: string;
  instance_id: string | null;
  target: string | null;
  outcome: string;
}

const encode = (seq: number): string => Buffer.from(`s:${seq}`, 'utf8').toString('base64url');
function decode(cursor: string): number {
  const m = /^s:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw new GatewayError('INVALID_FIELD', 'cursor: not a cursor of this log; start again without it');
  return Number(m[1]);
}

/** The audit log in PostgreSQL: one row per entry, in the order appended (seq), swept by age. */
export class PgAudit implements AuditLog {
  constructor(private readonly db: Db) {}

  async append(e: AuditEntry): Promise<void> {
    await this.db.query('audit log', 'INSERT INTO audit (at, actor, action, instance_id, target, outcome) VALUES ($1, $2, $3, $4, $5, $6)', [
      e.at,
      e.actor,
      e.action,
      e.instanceId ?? null,
      e.target ?? null,
      e.outcome,
    ]);
  }

  async query(q: AuditQuery): Promise<AuditPage> {
    const below = q.cursor !== undefined ? decode(q.cursor) : Number.MAX_SAFE_INTEGER;
    const { rows } = await this.db.query<Row>(
      'audit log',
      `SELECT seq, at, actor, action, instance_id, target, outcome FROM audit
        WHERE seq < $1 AND ($2::text IS NULL OR instance_id = $2) AND ($3::text IS NULL OR actor = $3)
        ORDER BY seq DESC LIMIT $4`,
      [below, q.instanceId ?? null, q.actor ?? null, q.limit + 1],
    );
    const page = rows.slice(0, q.limit);
    const entries = page.map((r) => ({
      at: r.at.toISOString(),
      actor: r.actor,
      action: r.action,
      ...(r.instance_id !== null ? { instanceId: r.instance_id } : {}),
      ...(r.target !== null ? { target: r.target } : {}),
      outcome: r.outcome,
    }));
    return { entries, nextCursor: rows.length > page.length && page.length > 0 ? encode(page[page.length - 1]!.seq) : null };
  }

  async sweep(before: number): Promise<void> {
    await this.db.query('audit log', 'DELETE FROM audit WHERE at < $1', [new Date(before).toISOString()]);
  }
}
