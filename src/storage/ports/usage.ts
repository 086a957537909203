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

/** The UTC day of an epoch ms time. */
export function utcDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
