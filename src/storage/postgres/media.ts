import { readFile, stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { storageError } from '../../domain/errors.js';
import type { MediaRepository, StoredMedia } from '../ports/media.js';
import type { Db } from './db.js';
import type { LeaseEpochs } from './lease-epochs.js';

const SAFE_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** Bytes read per query while streaming (the column is stored uncompressed: see 001-core). */
const CHUNK = 256 * 1024;

export interface PgMediaLimits {
  keepMs: number;
  maxBytesPerInstance: number;
}

/**
 * Media bytes in PostgreSQL (bytea, one row per message), kept `media.keepDays` and at most
 * `media.maxStoreBytes` per instance: each put drops what expired and the oldest past the bound
 * in the same statement order as the files engine (oldest first). Served as a stream read in
 * chunks, so a large file never sits in memory whole while it is sent.
 */
export class PgMedia implements MediaRepository {
  constructor(
    private readonly db: Db,
    private readonly limits: PgMediaLimits,
    /** The lease epoch each put carries (migration 011). */
    private readonly epochs: LeaseEpochs,
  ) {}

  async put(instanceId: string, messageId: string, source: { bytes: Uint8Array } | { path: string }, now: number): Promise<boolean> {
    if (!SAFE_ID.test(messageId)) return false;
    const epoch = this.epochs.of(instanceId);
    const size = 'bytes' in source ? source.bytes.length : (await stat(source.path)).size;
    if (size > this.limits.maxBytesPerInstance) return false;
    let bytes: Buffer;
    try {
      bytes = 'bytes' in source ? Buffer.from(source.bytes.buffer, source.bytes.byteOffset, source.bytes.byteLength) : await readFile(source.path);
    } catch (err) {
      throw storageError(err, `media of ${messageId}`);
    }
    await this.db.query(
      'media store',
      `INSERT INTO media (instance_id, message_id, size, at, bytes, lease_epoch) VALUES ($1, $2, $3, $4, $5, $6)
      ON CONFLICT (instance_id, message_id) DO UPDATE SET size = excluded.size, at = excluded.at, bytes = excluded.bytes, lease_epoch = $6`,
      [instanceId, messageId, bytes.length, now, bytes, epoch],
    );
    await this.enforce(instanceId, now);
    return true;
  }

  /** Drops this instance's expired media and the oldest past its bound. */
  private async enforce(instanceId: string, now: number): Promise<void> {
    await this.db.query(
      'media store',
      `DELETE FROM media d USING (
        SELECT message_id, at, sum(size) OVER (ORDER BY at DESC, message_id DESC ROWS UNBOUNDED PRECEDING) AS total FROM media WHERE instance_id = $1
      ) x WHERE d.instance_id = $1 AND d.message_id = x.message_id AND (x.at < $2 OR x.total > $3)`,
      [instanceId, now - this.limits.keepMs, this.limits.maxBytesPerInstance],
    );
  }

  async get(instanceId: string, messageId: string, now?: number): Promise<StoredMedia | null> {
    if (!SAFE_ID.test(messageId)) return null;
    const { rows } = await this.db.query<{ size: number; at: number }>('media store', 'SELECT size, at FROM media WHERE instance_id = $1 AND message_id = $2', [instanceId, messageId]);
    const row = rows[0];
    if (!row || (now !== undefined && row.at < now - this.limits.keepMs)) return null;
    const db = this.db;
    async function* chunks(): AsyncGenerator<Buffer> {
      for (let offset = 0; offset < row!.size; offset += CHUNK) {
        const r = await db.query<{ b: Buffer | null }>('media store', 'SELECT substring(bytes FROM $3 FOR $4) AS b FROM media WHERE instance_id = $1 AND message_id = $2', [instanceId, messageId, offset + 1, CHUNK]);
        const b = r.rows[0]?.b;
        if (!b) throw new Error(`the media of ${messageId} was removed while it was read`);
        yield b;
      }
    }
    return { size: row.size, path: null, stream: () => Readable.from(chunks(), { objectMode: false }) };
  }

  async remove(instanceId: string, messageId: string): Promise<void> {
    await this.db.query('media store', 'DELETE FROM media WHERE instance_id = $1 AND message_id = $2', [instanceId, messageId]);
  }

  async sweep(now: number): Promise<void> {
    await this.db.query('media store', 'DELETE FROM media WHERE at < $1', [now - this.limits.keepMs]);
  }

  async removeInstance(instanceId: string): Promise<void> {
    await this.db.query('media store', 'DELETE FROM media WHERE instance_id = $1', [instanceId]);
  }
}
