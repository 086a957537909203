import { readFile } from 'node:fs/promises';
import type { Db } from '../postgres/db.js';
import type { SourceMedia } from './source-media.js';

/**
 * Copies an instance's media bytes into the PostgreSQL engine's `media` table (one row per message:
 * size, when it was stored, the bytes), one file at a time so memory holds one file at most. A row
 * already there (a resumed run) is replaced; rows of media the files no longer hold are removed.
 */
export async function copyMedia(db: Db, instanceId: string, files: readonly SourceMedia[]): Promise<{ files: number; bytes: number }> {
  let bytes = 0;
  for (const f of files) {
    const data = await readFile(f.path);
    await db.query(
      'media store',
      `INSERT INTO media (instance_id, message_id, size, at, bytes) VALUES ($1, $2, $3, $4, $5)
      ON CONFLICT (instance_id, message_id) DO UPDATE SET size = excluded.size, at = excluded.at, bytes = excluded.bytes`,
      [instanceId, f.messageId, data.length, f.at, data],
    );
    bytes += data.length;
  }
  await db.query('media store', 'DELETE FROM media WHERE instance_id = $1 AND NOT (message_id = ANY ($2::text[]))', [instanceId, files.map((f) => f.messageId)]);
  return { files: files.length, bytes };
}
