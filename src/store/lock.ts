import lockfile from 'proper-lockfile';
import { UserError, errorMessage } from '../domain/errors.js';

const LOCK_OPTIONS = {
  realpath: false,
  stale: 10_000,
  retries: { retries: 400, factor: 1.2, minTimeout: 2, maxTimeout: 60, randomize: true },
} as const;

/**
 * Takes the lock: first without waiting (a synchronous mkdir, no thread-pool round trip: the common,
 * uncontended case on the hot path), then with retries if another process holds it.
 */
async function acquire(file: string, onCompromised: (err: Error) => void): Promise<() => Promise<void>> {
  try {
    const releaseSync = lockfile.lockSync(file, { realpath: false, stale: LOCK_OPTIONS.stale, onCompromised });
    return async () => releaseSync();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
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
