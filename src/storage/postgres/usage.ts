import type { Logger } from 'pino';
import { errorMessage } from '../../domain/errors.js';
import { utcDate, type UsageDay, type UsageRepository } from '../ports/usage.js';
import type { Db } from './db.js';

const FLUSH_MS = 1_000;

/**
 * Sends per instance and day in PostgreSQL: counts gather in memory and are added to their rows in
 * one statement within FLUSH_MS (each node adds its own, so nodes never overwrite each other).
 */
export class PgUsage implements UsageRepository {
  /** `${instanceId} ${date}` -> [sent, debited] not yet written. */
  private pending = new Map<string, [number, number]>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
  ) {}

  count(instanceId: string, at: number, debited: boolean): void {
    const key = `${instanceId} ${utcDate(at)}`;
    const c = this.pending.get(key) ?? [0, 0];
    c[0] += 1;
    if (debited) c[1] += 1;
    this.pending.set(key, c);
    this.timer ??= setTimeout(() => {
      this.timer = null;
      void this.flush().catch((err: unknown) => this.logger.warn({ err: errorMessage(err) }, 'could not write usage counts; retrying with the next ones'));
    }, FLUSH_MS);
    this.timer.unref();
  }

  async days(instanceId: string, from: string, to: string): Promise<UsageDay[]> {
    const { rows } = await this.db.query<{ day: string; sent: number; debited: number }>(
      'usage',
      `SELECT to_char(day, 'YYYY-MM-DD') AS day, sent, debited FROM usage_days WHERE instance_id = $1 AND day BETWEEN $2::date AND $3::date ORDER BY day`,
      [instanceId, from, to],
    );
    const merged = new Map(rows.map((r) => [r.day, { date: r.day, sent: r.sent, debited: r.debited }]));
    for (const [key, [s, d]] of this.pending) {
      const [id, date] = key.split(' ') as [string, string];
      if (id !== instanceId || date < from || date > to) continue;
      const m = merged.get(date) ?? { date, sent: 0, debited: 0 };
      merged.set(date, { date, sent: m.sent + s, debited: m.debited + d });
    }
    return [...merged.values()].sort((a, b) => (a.date < b.date ? -1 : 1));
  }

  flush(): Promise<void> {
    const run = this.flushing.then(() => this.write());
    this.flushing = run.catch(() => undefined);
    return run;
  }

  private async write(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = [...this.pending];
    this.pending = new Map();
    if (batch.length === 0) return;
    try {
      await this.db.query(
        'usage',
        `INSERT INTO usage_days (instance_id, day, sent, debited)
          SELECT * FROM unnest($1::text[], $2::date[], $3::integer[], $4::integer[])
          ON CONFLICT (instance_id, day) DO UPDATE SET sent = usage_days.sent + excluded.sent, debited = usage_days.debited + excluded.debited`,
        [batch.map(([k]) => k.split(' ')[0]), batch.map(([k]) => k.split(' ')[1]), batch.map(([, c]) => c[0]), batch.map(([, c]) => c[1])],
      );
    } catch (err) {
      // Kept for the next write.
      for (const [k, [s, d]] of batch) {
        const c = this.pending.get(k) ?? [0, 0];
        this.pending.set(k, [c[0] + s, c[1] + d]);
      }
      throw err;
    }
  }

  async sweep(before: string): Promise<void> {
    await this.db.query('usage', 'DELETE FROM usage_days WHERE day < $1::date', [before]);
  }

  async removeInstance(instanceId: string): Promise<void> {
    for (const k of [...this.pending.keys()]) if (k.startsWith(`${instanceId} `)) this.pending.delete(k);
    await this.db.query('usage', 'DELETE FROM usage_days WHERE instance_id = $1', [instanceId]);
  }
}
