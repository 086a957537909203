import type { InstanceRecord, InstanceStatus, ConnectionStatus } from '../domain/types.js';

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
