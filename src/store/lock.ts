import { mkdirSync, rmSync } from 'node:fs';
import lockfile from 'proper-lockfile';
import { UserError, errorMessage } from '../domain/errors.js';

const LOCK_OPTIONS = {
  realpath: false,
  stale: 10_000,
  retries: { retries: 400, factor: 1.2, minTimeout: 2, maxTimeout: 60, randomize: true },
} as const;

/**
 * Takes the lock. The common, uncontended case is one synchronous mkdir of `<file>.lock` (the same
 * directory proper-lockfile uses, so both kinds of holder exclude each other): no thread-pool round
 * trip on the per-send hot path. Holds on that path last well under a millisecond, far inside the
 * 10 s after which proper-lockfile would call the lock stale. If the lock is taken, proper-lockfile
 * waits for it with retries and stale-lock recovery.
 */
async function acquire(file: string, onCompromised: (err: Error) => void): Promise<() => Promise<void>> {
  const dir = `${file}.lock`;
  try {
    mkdirSync(dir);
    return async () => rmSync(dir, { recursive: true, force: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return lockfile.lock(file, { ...LOCK_OPTIONS, onCompromised });
}

/**
 * Runs `fn` while holding the cross-process lock of `file` (a `<file>.lock` directory). A process
 * killed while holding it leaves a lock that goes stale after 10 s.
 */
export async function withFileLock<R>(file: string, fn: () => Promise<R>): Promise<R> {
  let release: () => Promise<void>;
  let compromised: Error | null = null;
  try {
    // Another process took the lock over (we were stalled past `stale`); do not crash here, the
    // release below reports it.
    release = await acquire(file, (err) => (compromised = err));
  } catch (err) {
    throw new UserError(`${file}: could not take the store lock (${errorMessage(err)})`, 3);
  }
  try {
    return await fn();
  } finally {
    await release().catch(() => undefined);
    if (compromised) process.emitWarning(`store lock on ${file} was compromised: ${errorMessage(compromised)}`);
  }
}
