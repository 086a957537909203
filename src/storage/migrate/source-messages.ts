import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { GatewayConfig } from '../../config/schema.js';
import { DAY_MS } from '../../domain/clock.js';
import type { WriteGuard } from '../../fs/write-guard.js';
import { InstanceMessages } from '../files/messages/instance-messages.js';
import type { StoredMessage } from '../ports/messages.js';

/** One instance's messages as the files engine shows them, in the order it stored them. */
export interface SourceMessages {
  /** Message ids in journal order: the order PostgreSQL's `seq` must keep (each chat's order). */
  readonly ids: readonly string[];
  /**
   * Messages the files engine dropped when it opened the journal (past `history.days`) whose media
   * it drops with them: that media is not copied either.
   */
  readonly droppedWithMedia: ReadonlySet<string>;
  /** A message with everything that happened to it merged in (status, edit, reactions, deletion). */
  read(id: string): Promise<StoredMessage | null>;
  close(): Promise<void>;
}

const NONE: SourceMessages = { ids: [], droppedWithMedia: new Set(), read: async () => null, close: async () => undefined };

/**
 * Opens an instance's message journal the way the files engine does (replay, the per-chat bound and
 * the retention applied as of `now`), so what is copied is exactly what its routes would show.
 */
export async function openSourceMessages(messagesDir: string, instanceId: string, history: GatewayConfig['history'], now: number, guard: WriteGuard): Promise<SourceMessages> {
  const file = join(messagesDir, instanceId, 'journal.jsonl');
  // Opening creates a missing journal: an instance that never had a message keeps none.
  if (!existsSync(file)) return NONE;
  const dropped = new Set<string>();
  const im = await InstanceMessages.open(
    file,
    { maxPerChat: history.maxMessagesPerChat, keepMs: history.days * DAY_MS },
    (id, hasMedia) => {
      if (hasMedia) dropped.add(id);
    },
    now,
    guard,
  );
  const { entries } = im;
  const ids = [...entries.allRows()].sort((a, b) => entries.offset(a) - entries.offset(b)).map((row) => entries.id(row));
  return { ids, droppedWithMedia: dropped, read: (id) => im.message(id), close: () => im.close() };
}
