import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AuditEntry } from '../ports/audit.js';

/** The files engine's day files (files/audit.ts): DATA_DIR/audit/YYYY-MM-DD.jsonl. */
const DAY_FILE = /^(\d{4}-\d{2}-\d{2})\.jsonl$/;

const isEntry = (v: unknown): v is AuditEntry => {
  const e = v as Partial<AuditEntry> | null;
  return typeof e === 'object' && e !== null && typeof e.at === 'string' && typeof e.actor === 'string' && typeof e.action === 'string' && typeof e.outcome === 'string';
};

/**
 * The audit log as the files engine shows it (the same lines its queries read: each complete line
 * that is an entry), oldest first, one day file at a time. Read here rather than through the port,
 * whose pages go newest first and read their day file again each: a long log would cost its
 * length squared.
 */
export async function* sourceAuditDays(dir: string): AsyncGenerator<AuditEntry[]> {
  const names = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [] as string[];
    throw err;
  });
  const days = names
    .map((n) => DAY_FILE.exec(n)?.[1])
    .filter((d): d is string => d !== undefined)
    .sort();
  for (const day of days) {
    const rows = (await readFile(join(dir, `${day}.jsonl`), 'utf8')).split('\n');
    // The last element is after the final newline: empty, or a line cut short.
    rows.pop();
    const entries: AuditEntry[] = [];
    for (const line of rows) {
      try {
        const v: unknown = JSON.parse(line);
        if (isEntry(v)) entries.push(v);
      } catch {
        // Not an entry (the engine skips it too).
      }
    }
    yield entries;
  }
}

/** How many entries the log holds. */
export async function countSourceAudit(dir: string): Promise<number> {
  let n = 0;
  for await (const day of sourceAuditDays(dir)) n += day.length;
  return n;
}
