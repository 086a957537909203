import type { MessageStatus } from './types.js';

/** Statuses in the order a message moves through them; `failed` ends a message that was not delivered. */
const RANK: Record<MessageStatus, number> = { pending: 0, sent: 1, delivered: 2, read: 3, played: 4, failed: 1.5 };

/** Whether `to` is a step forward from `from` (a status never goes backwards). */
export function isForward(from: MessageStatus, to: MessageStatus): boolean {
  if (from === 'failed') return false;
  if (to === 'failed') return from === 'pending' || from === 'sent';
  return RANK[to] > RANK[from];
}
