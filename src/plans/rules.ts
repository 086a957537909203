import type { InstanceStatus, ConnectionStatus } from '../domain/types.js';
import type { InstanceRecord } from '../schemas/instance.js';

/** Premium while premiumUntil lies in the future. */
export function isPremium(record: Pick<InstanceRecord, 'premiumUntil'>, now: number): boolean {
  return record.premiumUntil !== null && Date.parse(record.premiumUntil) > now;
}

/** Premium lapsed and no credits left: the instance needs premium (or credits) again. */
export function requiresPremium(record: Pick<InstanceRecord, 'premiumUntil'>, balance: number, now: number): boolean {
  return record.premiumUntil !== null && !isPremium(record, now) && balance <= 0;
}

/** The status the API shows: the plan overlay on top of the connection's own status. */
export function effectiveStatus(record: Pick<InstanceRecord, 'premiumUntil'>, balance: number, now: number, connection: ConnectionStatus): InstanceStatus {
  return requiresPremium(record, balance, now) ? 'requires_premium' : connection;
}

/** quotaRemaining as the contract shows it: a decimal string, or "unlimited" while premium. */
export function quotaRemaining(record: Pick<InstanceRecord, 'premiumUntil'>, balance: number, now: number): string {
  return isPremium(record, now) ? 'unlimited' : String(balance);
}

/**
 * premiumUntil after granting `days` at `now`: from now, or from the current end if it lies in the
 * future; capped at 10,000 years, so repeated grants never pass what a date can hold.
 */
export function extendedPremium(current: string | null, days: number, now: number): string {
  const DAY = 86_400_000;
  const from = current ? Date.parse(current) : 0;
  const until = Math.max(now, Number.isFinite(from) ? from : 0) + days * DAY;
  return new Date(Math.min(until, now + 3_650_000 * DAY)).toISOString();
}
