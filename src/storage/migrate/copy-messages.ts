import type { StoredMessage } from '../ports/messages.js';
import type { Db } from '../postgres/db.js';
import type { SourceMessages } from './source-messages.js';

/** Messages per statement. */
const BATCH = 500;

/**
 * Rows as the PostgreSQL engine's `messages` table holds them (see postgres/messages.ts). The body
 * is the message as the files engine shows it, everything that happened to it merged in (an edit's
 * text with `edited`, a deletion without its text), so no edit is pending in `edited_text`; the
 * status, deletion, reactions, poll votes and error are columns as the engine keeps them. Reading a row back
 * merges the same result.
 */
function columns(ms: StoredMessage[]) {
  return [
    ms.map((m) => m.messageId),
    ms.map((m) => m.chatId),
    ms.map((m) => m.fromMe),
    ms.map((m) => (!m.fromMe && m.fromName !== undefined ? m.fromName : null)),
    ms.map((m) => m.status),
    ms.map((m) => m.timestamp),
    ms.map((m) => m.updatedAt),
    ms.map((m) => JSON.stringify(m)),
    ms.map((m) => m.deleted === true),
    ms.map((m) => (m.reactions && Object.keys(m.reactions).length > 0 ? JSON.stringify(m.reactions) : null)),
    ms.map((m) => m.error ?? null),
    ms.map((m) => m.media !== undefined),
    ms.map((m) => (m.votes && Object.keys(m.votes).length > 0 ? JSON.stringify(m.votes) : null)),
  ];
}

/**
 * Copies an instance's messages in the order the files engine stored them (so `seq` keeps each
 * chat's order), in batches; a message already there (a resumed run) is brought up to date and
 * keeps its place. Rows of messages the files no longer hold are removed at the end.
 */
export async function copyMessages(db: Db, instanceId: string, source: SourceMessages): Promise<number> {
  let copied = 0;
  for (let i = 0; i < source.ids.length; i += BATCH) {
    const batch: StoredMessage[] = [];
    for (const id of source.ids.slice(i, i + BATCH)) {
      const m = await source.read(id);
      if (!m) throw new Error(`message ${id} of ${instanceId} could not be read back from its journal`);
      batch.push(m);
    }
    await db.query(
      'message store',
      `INSERT INTO messages (instance_id, message_id, chat_id, from_me, from_name, status, ts, updated_at, body, edited_text, deleted, reactions, error, has_media, votes)
      SELECT $1, x.m, x.c, x.f, x.n, x.s, x.t, x.u, x.b, NULL, x.d, x.r::jsonb, x.e, x.h, x.v::jsonb
      FROM unnest($2::text[], $3::text[], $4::boolean[], $5::text[], $6::text[], $7::bigint[], $8::bigint[], $9::text[], $10::boolean[], $11::text[], $12::text[], $13::boolean[], $14::text[])
        WITH ORDINALITY AS x(m, c, f, n, s, t, u, b, d, r, e, h, v, o)
      ORDER BY x.o
      ON CONFLICT (instance_id, message_id) DO UPDATE SET chat_id = excluded.chat_id, from_me = excluded.from_me, from_name = excluded.from_name,
        status = excluded.status, ts = excluded.ts, updated_at = excluded.updated_at, body = excluded.body, edited_text = NULL,
        deleted = excluded.deleted, reactions = excluded.reactions, error = excluded.error, has_media = excluded.has_media, votes = excluded.votes`,
      [instanceId, ...columns(batch)],
    );
    copied += batch.length;
  }
  await db.query('message store', 'DELETE FROM messages WHERE instance_id = $1 AND NOT (message_id = ANY ($2::text[]))', [instanceId, source.ids]);
  return copied;
}
