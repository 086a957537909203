import type { MessageStatus } from '../../../domain/types.js';
import type { StoredMessage, StoredVote } from '../../ports/messages.js';

export type { StoredMessage };

/**
 * The lines of an instance's message journal (DATA_DIR/messages/<id>/journal.jsonl). A message is
 * written whole once (`m`); what happens to it later is a small line of its own, applied in order
 * on replay. Compaction rewrites each kept message as one merged `m` line.
 */
export type JournalRecord =
  | ({ k: 'm' } & StoredMessage)
  | { k: 's'; id: string; status: MessageStatus; at: number; error?: string }
  | { k: 'e'; id: string; text: string; at: number }
  | { k: 'd'; id: string; at: number }
  | { k: 'r'; id: string; sender: string; emoji: string; at: number }
  | ({ k: 'v'; id: string; voter: string } & StoredVote)
  | { k: 'read'; chat: string; at: number }
  /** The account deleted the chat: every message of it kept so far goes. */
  | { k: 'clear'; chat: string; at: number };

/** Parses one line; null for a line that is not a record of this format (skipped on replay). */
export function parseRecord(text: string): JournalRecord | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null) return null;
  const k = (v as { k?: unknown }).k;
  return k === 'm' || k === 's' || k === 'e' || k === 'd' || k === 'r' || k === 'v' || k === 'read' || k === 'clear' ? (v as JournalRecord) : null;
}

/** Statuses in the order a message moves through them; `failed` ends a message that was not delivered. */
const RANK: Record<MessageStatus, number> = { pending: 0, sent: 1, delivered: 2, read: 3, played: 4, failed: 1.5 };

/** Whether `to` is a step forward from `from` (a status never goes backwards). */
export function isForward(from: MessageStatus, to: MessageStatus): boolean {
  if (from === 'failed') return false;
  if (to === 'failed') return from === 'pending' || from === 'sent';
  return RANK[to] > RANK[from];
}
