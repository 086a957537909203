import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';

/** Mode for every file the gateway writes: secrets and customer data live in them. */
export const FILE_MODE = 0o600;
export const DIR_MODE = 0o700;

import type { WriteGuard } from './write-guard.js';

export type { WriteGuard };

/** A temp name beside `file` that store/leftovers.ts recognises (and sweeps once its writer is gone). */
export function tempPath(file: string): string {
  return join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

export interface WriteOptions {
  /** Checked right before the rename: the writer must still hold the data dir lock. */
  guard: WriteGuard;
  /**
   * false skips the fsyncs, for state whose loss in a crash is harmless; the rename still makes
   * the write all-or-nothing. Default true.
   */
  durable?: boolean;
}

/**
 * Writes `data` to `file` so that a crash at any moment leaves either the old or the new content:
 * write a temp file in the same directory, fsync it, rename it over the target, fsync the directory.
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array, options: WriteOptions): Promise<void> {
  const durable = options.durable ?? true;
  const tmp = tempPath(file);
  const handle = await open(tmp, 'w', FILE_MODE);
  try {
    await handle.writeFile(data);
    if (durable) await handle.sync();
  } catch (err) {
    await handle.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw err;
  }
  await handle.close();
  try {
    options.guard.assertHeld();
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  if (durable) await syncDir(dirname(file));
}

/**
 * Creates a new file durably (fails if it exists). No temp file and rename are needed: until this
 * resolves nobody has been told the file exists, and a reader must treat a torn one as absent.
 */
export async function createFileDurable(file: string, data: string | Uint8Array, guard: WriteGuard): Promise<void> {
  guard.assertHeld();
  const handle = await open(file, 'wx', FILE_MODE);
  try {
    await handle.writeFile(data);
    // The entry exists and the data is written: the two flushes are independent, so they overlap.
    await Promise.all([handle.sync(), syncDir(dirname(file))]);
  } catch (err) {
    await handle.close().catch(() => undefined);
    await rm(file, { force: true });
    throw err;
  }
  await handle.close();
}

/**
 * Directory fsyncs, coalesced per directory: a burst of writes into one directory (the webhook
 * outbox, the credit files) shares one fsync instead of queueing one each behind the journal. A
 * caller always waits for an fsync that started after its own rename, so nothing is skipped.
 */
interface DirSync {
  running: Promise<void> | null;
  waiting: Promise<void> | null;
}
const dirSyncs = new Map<string, DirSync>();

async function syncDirNow(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Directory fsync is not supported everywhere; the rename itself is still atomic.
  }
}

function launch(dir: string, s: DirSync): Promise<void> {
  const p = syncDirNow(dir).finally(() => {
    s.running = null;
    if (!s.waiting) dirSyncs.delete(dir);
  });
  s.running = p;
  return p;
}

export function syncDir(dir: string): Promise<void> {
  let s = dirSyncs.get(dir);
  if (!s) {
    s = { running: null, waiting: null };
    dirSyncs.set(dir, s);
  }
  if (!s.running) return launch(dir, s);
  if (!s.waiting) {
    const state = s;
    state.waiting = (state.running as Promise<void>).then(() => {
      state.waiting = null;
      return launch(dir, state);
    });
  }
  return s.waiting as Promise<void>;
}

export async function ensureDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: DIR_MODE });
}
