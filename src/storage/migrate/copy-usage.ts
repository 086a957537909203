import type { UsageDay, UsageRepository } from '../ports/usage.js';
import type { Db } from '../postgres/db.js';

/** Every day an engine holds (the port reads a range of YYYY-MM-DD, both ends included). */
export const ALL_DAYS = ['0001-01-01', '9999-12-31'] as const;

/** An instance's days with counts, as the engine holds them (not only those within `history.days`: the nodes sweep). */
export function usageDays(from: UsageRepository, instanceId: string): Promise<UsageDay[]> {
  return from.days(instanceId, ...ALL_DAYS);
}

/**
 * An instance's sends per day, one row per day as the PostgreSQL engine keeps them (`usage_days`),
 * in one statement: the days are set to the files' counts (not added to: a resumed run writes the
 * same again) and days the files do not hold are removed.
 */
export async function copyUsage(db: Db, from: UsageRepository, instanceId: string): Promise<{ days: number; sent: number }> {
  const days = await usageDays(from, instanceId);
  await db.query(
    'usage',
    `WITH gone AS (DELETE FROM usage_days WHERE instance_id = $1 AND NOT (day = ANY ($2::date[])))
    INSERT INTO usage_days (instance_id, day, sent, debited) SELECT $1, * FROM unnest($2::date[], $3::integer[], $4::integer[])
    ON CONFLICT (instance_id, day) DO UPDATE SET sent = excluded.sent, debited = excluded.debited`,
    [instanceId, days.map((d) => d.date), days.map((d) => d.sent), days.map((d) => d.debited)],
  );
  return { days: days.length, sent: days.reduce((n, d) => n + d.sent, 0) };
}
