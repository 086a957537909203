import { lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { isInstanceId, type StorePaths } from './paths.js';
import { processRunning, processStartedAtMs } from './process-identity.js';

/**
 * Temp names of atomic writes and of lock scratch directories: `.<name>.<pid>.<hex>.tmp`
 * (src/storage/files/atomic-write.ts, src/storage/files/lock-dir.ts). The pid says whose it is.
 */
const TEMP_NAME = /^\.(.+)\.(\d+)\.([0-9a-f]+)\.tmp$/;

/**
 * A temp file whose writer runs may be half-way through a write: it is never removed. Start dates
 * come from /proc and a wall clock, so a file counts as older than a process only by this much.
 */
const CLOCK_MARGIN_MS = 5_000;

/**
 * Whether the temp file `pid` wrote (last modified at `mtimeMs`) was left by a process that is
 * gone. The pid may belong to another process by now (pids are reused; in a container the daemon
 * is pid 1 after every restart): then the file is a leftover only if it is older than that
 * process, which could not have written it.
 */
function isLeftover(pid: number, mtimeMs: number): boolean {
  if (pid !== process.pid && !processRunning(pid, null)) return true;
  const started = processStartedAtMs(pid);
  return started !== null && mtimeMs < started - CLOCK_MARGIN_MS;
}

export interface LeftoverOptions {
  /**
   * Temp files younger than this are kept whatever their pid says (default 30 s): a writer in
   * another pid namespace (a container sharing the data dir with the host's CLI) has a pid that
   * means nothing here, and no atomic write takes that long.
   */
  minAgeMs?: number;
  /** This process holds the data dir lock (see removeDataDirLeftovers). */
  lockHeld?: boolean;
}

/**
 * Removes from `dir` the temp files (and lock scratch directories) of atomic writes whose writer
 * died before renaming them, and never one a live process may still be writing. Returns the names
 * removed. Not recursive: call it for each directory the store writes in.
 */
export async function removeLeftovers(dir: string, options: LeftoverOptions = {}): Promise<string[]> {
  const minAgeMs = options.minAgeMs ?? 30_000;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const removed: string[] = [];
  for (const name of names) {
    const m = TEMP_NAME.exec(name);
    if (!m) continue;
    const path = join(dir, name);
    let mtimeMs: number;
    try {
      mtimeMs = (await lstat(path)).mtimeMs;
    } catch {
      continue; // renamed into place or removed meanwhile
    }
    if (Date.now() - mtimeMs < minAgeMs || !isLeftover(Number(m[2]), mtimeMs)) continue;
    await rm(path, { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

/**
 * Sweeps every directory the store writes temp files in: the data dir, credits/, auth/, and each
 * instance's folder under messages/ (journal compaction), media/ (downloads) and flows/. The webhook
 * outbox sweeps its own folders when it loads.
 */
export async function removeDataDirLeftovers(paths: StorePaths, options: LeftoverOptions = {}): Promise<string[]> {
  const dirs = [paths.creditsDir, paths.authDir];
  for (const parent of [paths.messagesDir, paths.mediaDir, paths.flowsDir]) {
    const names = await readdir(parent).catch(() => [] as string[]);
    for (const name of names) if (isInstanceId(name)) dirs.push(join(parent, name));
  }
  const removed: string[] = [];
  // The data dir itself also holds the lock's scratch directories of processes waiting for it.
  for (const name of await removeLeftovers(paths.dataDir, options).catch(() => [] as string[])) removed.push(join(paths.dataDir, name));
  // Below it, only the lock holder writes: with the lock held, a temp file there of any other
  // process is a leftover, however young (a restart right after a full disk found thousands).
  const below = options.lockHeld ? { ...options, minAgeMs: 0 } : options;
  for (const dir of dirs) {
    for (const name of await removeLeftovers(dir, below).catch(() => [] as string[])) removed.push(join(dir, name));
  }
  return removed;
}
