import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { GatewayError, storageError } from '../../domain/errors.js';
import { ensureDir, type WriteGuard } from '../../fs/atomic-write.js';
import type { AuditEntry, AuditLog, AuditPage, AuditQuery } from '../ports/audit.js';
import { Journal } from './journal.js';

const DAY_FILE = /^(\d{4}-\d{2}-\d{2})\.jsonl$/;

const isEntry = (v: unknown): v is AuditEntry => {
  const e = v as Partial<AuditEntry> | null;
  return typeof e === 'object' && e !== null && typeof e.at === 'string' && typeof e.actor === 'string' && typeof e.action === 'string' && typeof e.outcome === 'string';
};

/** A position in the log: entries of `day` before line `line` (and every earlier day) come next. */
interface Position {
  day: string;
  line: number;
}
const encode = (p: Position): string => Buffer.from(`${p.day}:${p.line}`, 'utf8').toString('base64url');
function decode(cursor: string): Position {
  const m = /^(\d{4}-\d{2}-\d{2}):(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw new GatewayError('INVALID_FIELD', 'cursor: not a cursor of this log; start again without it');
  return { day: m[1]!, line: Number(m[2]) };
}

/**
 * The audit log as files: one append-only JSON-lines file per UTC day (`DATA_DIR/audit/
 * YYYY-MM-DD.jsonl`, 0600), each append fdatasynced (group commit) before it resolves. Nothing is
 * rewritten: the bound by age removes whole days (so an entry may outlive `audit.keepDays` by
 * less than a day). A query reads the day files newest first until its page is full.
 */
export class AuditFiles implements AuditLog {
  private current: { day: string; journal: Promise<Journal> } | null = null;

  constructor(
    private readonly dir: string,
    private readonly guard: WriteGuard,
  ) {}

  private journal(day: string): Promise<Journal> {
    if (this.current?.day === day) return this.current.journal;
    const previous = this.current;
    const opened = (async () => {
      await previous?.journal.then((j) => j.close()).catch(() => undefined);
      await ensureDir(this.dir);
      return (await Journal.open(join(this.dir, `${day}.jsonl`), { guard: this.guard })).journal;
    })();
    this.current = { day, journal: opened };
    opened.catch(() => {
      if (this.current?.journal === opened) this.current = null;
    });
    return opened;
  }

  async append(entry: AuditEntry): Promise<void> {
    const day = entry.at.slice(0, 10);
    const journal = await this.journal(day);
    try {
      await journal.append(JSON.stringify(entry)).durable;
    } catch (err) {
      // A journal that failed a write refuses more: the next append opens it again.
      if (this.current?.day === day) this.current = null;
      throw storageError(err, 'the audit log');
    }
  }

  private async days(): Promise<string[]> {
    const names = await readdir(this.dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return [] as string[];
      throw err;
    });
    return names
      .map((n) => DAY_FILE.exec(n)?.[1])
      .filter((d): d is string => d !== undefined)
      .sort()
      .reverse();
  }

  private async lines(day: string): Promise<Array<AuditEntry | null>> {
    const text = await readFile(join(this.dir, `${day}.jsonl`), 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return '';
      throw err;
    });
    const rows = text.split('\n');
    // The last element is after the final newline: empty, or a line still being written.
    rows.pop();
    return rows.map((l) => {
      try {
        const v: unknown = JSON.parse(l);
        return isEntry(v) ? v : null;
      } catch {
        return null;
      }
    });
  }

  async query(q: AuditQuery): Promise<AuditPage> {
    const from = q.cursor !== undefined ? decode(q.cursor) : null;
    const entries: AuditEntry[] = [];
    let last: Position | null = null;
    for (const day of await this.days()) {
      if (from && day > from.day) continue;
      const lines = await this.lines(day);
      const end = from && day === from.day ? Math.min(from.line, lines.length) : lines.length;
      for (let i = end - 1; i >= 0; i -= 1) {
        const e = lines[i];
        if (!e || (q.instanceId !== undefined && e.instanceId !== q.instanceId) || (q.actor !== undefined && e.actor !== q.actor)) continue;
        if (entries.length === q.limit) return { entries, nextCursor: encode(last!) };
        entries.push(e);
        last = { day, line: i };
      }
    }
    return { entries, nextCursor: null };
  }

  async sweep(before: number): Promise<void> {
    const cutoff = new Date(before).toISOString().slice(0, 10);
    for (const day of await this.days()) {
      if (day >= cutoff || day === this.current?.day) continue;
      this.guard.assertHeld();
      await rm(join(this.dir, `${day}.jsonl`), { force: true });
    }
  }

  async close(): Promise<void> {
    const c = this.current;
    this.current = null;
    await c?.journal.then((j) => j.close()).catch(() => undefined);
  }
}
