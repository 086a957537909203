import type { Readable } from 'node:stream';

/** Stored media bytes, readable as a stream. */
export interface StoredMedia {
  size: number;
  /** A new stream of the bytes each call. */
  stream(): Readable;
  /** A file holding the bytes, where the engine keeps them in files (else null: read `stream`). */
  path: string | null;
}

/**
 * The bytes of media messages, in and out, kept `media.keepDays` and at most
 * `media.maxStoreBytes` per instance (the oldest go first).
 */
export interface MediaRepository {
  /** Stores bytes (or a file's bytes) for a message; false when it is over the instance's limit alone. */
  put(instanceId: string, messageId: string, source: { bytes: Uint8Array } | { path: string }, now: number): Promise<boolean>;
  /** The stored media, or null once expired or never stored. */
  get(instanceId: string, messageId: string, now?: number): Promise<StoredMedia | null>;
  remove(instanceId: string, messageId: string): Promise<void>;
  /** Drops what expired. */
  sweep(now: number): Promise<void>;
  removeInstance(instanceId: string): Promise<void>;
}
