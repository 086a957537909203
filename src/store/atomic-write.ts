import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { closeSync, fsync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, basename, join } from 'node:path';

/** Mode for every file the gateway writes: secrets and customer data live in them. */
export const FILE_MODE = 0o600;
export const DIR_MODE = 0o700;

function tempPath(file: string): string {
  return join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

/**
 * Writes `data` to `file` so that a crash at any moment leaves either the old or the new content:
 * write a temp file in the same directory, fsync it, rename it over the target, fsync the directory.
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array): Promise<void> {
  const tmp = tempPath(file);
  const handle = await open(tmp, 'w', FILE_MODE);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } catch (err) {
    await handle.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw err;
  }
  await handle.close();
  try {
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  await syncDir(dirname(file));
}

/** Synchronous twin of writeFileAtomic, for shutdown paths where the event loop is ending. */
export function writeFileAtomicSync(file: string, data: string | Uint8Array): void {
  const tmp = tempPath(file);
  const fd = openSync(tmp, 'w', FILE_MODE);
  try {
    writeFileSync(fd, data);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
  closeSync(fd);
  renameSync(tmp, file);
  try {
    const dfd = openSync(dirname(file), 'r');
    try {
      fsyncSync(dfd);
    } finally {
      closeSync(dfd);
    }
  } catch {
    // Directory fsync is not supported everywhere; the rename itself is still atomic.
  }
}

/**
 * writeFileAtomic for files of a few hundred bytes on the hot path (credit debits): the quick steps
 * (open, write, close, rename) run synchronously, only the two fsyncs wait on the thread pool, so a
 * debit costs two event-loop round trips instead of a dozen. `durable: false` skips the fsyncs for
 * state whose loss in a crash is harmless (the rename still makes the write all-or-nothing).
 */
export async function writeSmallFileAtomic(file: string, data: string, options: { durable?: boolean } = {}): Promise<void> {
  const durable = options.durable ?? true;
  const tmp = tempPath(file);
  const fd = openSync(tmp, 'w', FILE_MODE);
  try {
    writeFileSync(fd, data);
    if (durable) await new Promise<void>((resolve, reject) => fsync(fd, (err) => (err ? reject(err) : resolve())));
  } catch (err) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
  closeSync(fd);
  try {
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  if (durable) await syncDir(dirname(file));
}

async function syncDir(dir: string): Promise<void> {
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

export async function ensureDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: DIR_MODE });
}

export function ensureDirSync(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: DIR_MODE });
}
