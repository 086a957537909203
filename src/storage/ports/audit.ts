/** One audited action: who, when, what, on which instance and target, and how it ended. */
export interface AuditEntry {
  /** ISO time. */
  at: string;
  /** `secret` (the server secret or the local CLI), `instance:ID` (its key), `operator:NAME`. */
  actor: string;
  /** `panel.signin`, `key.rotate`, `credits.add`, `handover.reply`, ... (README lists them). */
  action: string;
  instanceId?: string;
  /** What it was done to: a chat id, an operator's name, a delivery id. Never a secret or a message body. */
  target?: string;
  /** `ok`, or the error code it was refused with (`UNAUTHORIZED`, `INSUFFICIENT_CREDITS`, ...). */
  outcome: string;
}

export interface AuditQuery {
  instanceId?: string;
  actor?: string;
  limit: number;
  /** From a previous page's `nextCursor`. */
  cursor?: string;
}

export interface AuditPage {
  /** Newest first. */
  entries: AuditEntry[];
  nextCursor: string | null;
}

/**
 * The audit log: append-only (nothing is ever changed), bounded by age (`sweep`). An append
 * resolves once durable. Cursors are opaque to callers; a cursor whose entries were swept still
 * pages on from where it was.
 */
export interface AuditLog {
  append(entry: AuditEntry): Promise<void>;
  query(q: AuditQuery): Promise<AuditPage>;
  /** Removes entries older than `before` (epoch ms). */
  sweep(before: number): Promise<void>;
}
