/** What one instance sent on one day (UTC). */
export interface UsageDay {
  /** YYYY-MM-DD (UTC). */
  date: string;
  /** Messages that left (premium ones too). */
  sent: number;
  /** Credits debited for them. */
  debited: number;
}

/**
 * Sends per instance and day. Counting is on the hot path of every send, so `count` is
 * synchronous and the engines write counts in batches (within a second or two, and at close): a
 * crash may lose the counts of the last moments, never the credits themselves (the credits port
 * is exact). Kept `keepDays` (history.days), like history.
 */
export interface UsageRepository {
  /** One message sent now by `instanceId` (`debited`: a credit was debited for it). */
  count(instanceId: string, at: number, debited: boolean): void;
  /** Days from `from` to `to` (YYYY-MM-DD, both included) that have counts, oldest first. */
  days(instanceId: string, from: string, to: string): Promise<UsageDay[]>;
  /** Writes the counts not yet written. */
  flush(): Promise<void>;
  /** Removes days before `before` (YYYY-MM-DD). */
  sweep(before: string): Promise<void>;
  removeInstance(instanceId: string): Promise<void>;
}

/** The day `utcDate` formatted last: [its first ms, its first ms of the next day, its text]. */
let lastDay: [number, number, string] = [0, 0, ''];

/**
 * The UTC day of an epoch ms time. Counted once per send (usage per day): the day is formatted
 * once and kept until a time outside it comes (a Date and an ISO string per send were ~1 % of the
 * send's CPU in the bench's profile).
 */
export function utcDate(ms: number): string {
  const [start, end, text] = lastDay;
  if (ms >= start && ms < end) return text;
  const dayStart = Math.floor(ms / 86_400_000) * 86_400_000;
  const day = new Date(ms).toISOString().slice(0, 10);
  lastDay = [dayStart, dayStart + 86_400_000, day];
  return day;
}
