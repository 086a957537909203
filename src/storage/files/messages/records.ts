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

export { isForward } from '../../../domain/message-status.js';
