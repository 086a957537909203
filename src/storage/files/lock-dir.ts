import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { isRecord } from '../../domain/guards.js';

/**
 * The on-disk side of an owner lock: a directory at the lock path holding `owner.json` (who holds
 * it; its mtime is the last refresh) and an empty `<token>.token` marker, so that "is this lock
 * still mine?" is one stat. Every change of the lock path is a rename, never an in-place edit or
 * a recursive delete of the shared path, so a reader sees a whole lock or none.
 */

export const OWNER_FILE = 'owner.json';

/** Who holds a lock. pid + startTime + bootId name one process; host says where pid means that. */
export interface LockOwner {
  pid: number;
  /** Field 22 of /proc/<pid>/stat (clock ticks since boot); null where there is no /proc. */
  startTime: number | null;
  bootId: string | null;
  /** The pid namespace the pid belongs to (containers); null where /proc does not say. */
  pidNamespace: string | null;
  host: string;
  /** Random, unique per acquisition: tells this lock from a later one at the same path. */
  token: string;
  /** What holds it ("daemon", "pair", "store", ...), for messages and for the CLI. */
  kind: string;
  acquiredAt: string;
}

/** The shape check of an owner record read from disk. */
export function isLockOwner(v: unknown): v is LockOwner {
  return (
    isRecord(v) &&
    Number.isSafeInteger(v.pid) &&
    (v.startTime === null || Number.isSafeInteger(v.startTime)) &&
    (v.bootId === null || typeof v.bootId === 'string') &&
    (v.pidNamespace === null || typeof v.pidNamespace === 'string') &&
    typeof v.host === 'string' &&
    typeof v.token === 'string' &&
    /^[0-9a-f]{32}$/.test(v.token) &&
    typeof v.kind === 'string' &&
    typeof v.acquiredAt === 'string'
  );
}

/** The empty file whose presence says the lock at `lockPath` is still the one holding `token`. */
export function tokenFile(lockPath: string, token: string): string {
  return join(lockPath, `${token}.token`);
}

/**
 * A unique name beside `path` in the temp-file pattern of atomic writes (`.<name>.<pid>.<hex>.tmp`),
 * so that what a crash leaves behind is swept by removeLeftovers like any other temp file.
 */
export function scratchPath(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
}

function code(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException).code;
}

/** Removes a directory under a name only this process uses (a scratch or a moved-aside lock). */
export function removeScratch(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * The same, off the caller's path: deleting a directory costs more than the rest of a lock cycle
 * together (about 80 µs on ext4), and the lock is free as soon as it was renamed aside. A scratch
 * that a crash leaves behind carries our pid, so removeLeftovers sweeps it.
 */
function removeScratchLater(dir: string): void {
  void rm(dir, { recursive: true, force: true }).catch(() => undefined);
}

/**
 * Builds a complete lock under a scratch name and renames it onto `path`: the owner record appears
 * with the lock, never after it. False when `path` is taken (rename onto a non-empty directory
 * fails). `path` must belong to this module alone: rename would replace an empty directory.
 */
export function install(path: string, owner: LockOwner): boolean {
  const tmp = scratchPath(path);
  mkdirSync(tmp, { mode: 0o700 });
  try {
    writeFileSync(join(tmp, OWNER_FILE), JSON.stringify(owner), { mode: 0o600 });
    writeFileSync(tokenFile(tmp, owner.token), '', { mode: 0o600 });
    renameSync(tmp, path);
    return true;
  } catch (err) {
    removeScratch(tmp);
    if (code(err) === 'ENOTEMPTY' || code(err) === 'EEXIST') return false;
    throw err;
  }
}

/** A look at the lock at a path. */
export interface Seen {
  /** null: a lock directory without a readable owner record (another tool's, or made by hand). */
  owner: LockOwner | null;
  /** Last refresh (the owner record's mtime), or the directory's mtime without one. */
  mtimeMs: number;
  /** The inode of what was read: a later lock at the same path has another one. */
  identity: string;
}

/** The lock at `path`, or null when there is none. Record and mtime come from one open file. */
export function inspect(path: string): Seen | null {
  let fd: number;
  try {
    fd = openSync(join(path, OWNER_FILE), 'r');
  } catch (err) {
    if (code(err) !== 'ENOENT' && code(err) !== 'ENOTDIR') throw err;
    try {
      const st = statSync(path);
      return { owner: null, mtimeMs: st.mtimeMs, identity: `dir:${st.dev}:${st.ino}` };
    } catch (err2) {
      if (code(err2) === 'ENOENT') return null;
      throw err2;
    }
  }
  try {
    const st = fstatSync(fd);
    let owner: LockOwner | null = null;
    try {
      const value: unknown = JSON.parse(readFileSync(fd, 'utf8'));
      if (isLockOwner(value)) owner = value;
    } catch {
      // unreadable: judged by age alone
    }
    return { owner, mtimeMs: st.mtimeMs, identity: `file:${st.dev}:${st.ino}` };
  } finally {
    closeSync(fd);
  }
}

/**
 * Removes the lock at `path` if it carries `token`: moved aside, checked there by its token file
 * (one stat), put back if it is not ours. The release of a holder, on the hot path.
 */
export function removeOwn(path: string, token: string): boolean {
  const aside = scratchPath(path);
  try {
    renameSync(path, aside);
  } catch (err) {
    if (code(err) === 'ENOENT') return false;
    throw err;
  }
  try {
    statSync(tokenFile(aside, token));
  } catch {
    try {
      renameSync(aside, path);
    } catch {
      removeScratch(aside);
    }
    return false;
  }
  removeScratchLater(aside);
  return true;
}

/**
 * Removes the lock at `path` only if it is the one `accept` approves, judged after the fact: the
 * lock is first renamed aside (atomic, so no other process can be half-way through with it), then
 * looked at; a lock that is not the judged one (ABA: released and taken again meanwhile) or that
 * was refreshed since is renamed back. If another lock was installed in that instant, the one
 * moved aside cannot go back; its holder finds its token gone and stops before committing.
 * Returns true when a lock was removed.
 */
export function removeIf(path: string, accept: (moved: Seen) => boolean): boolean {
  const aside = scratchPath(path);
  try {
    renameSync(path, aside);
  } catch (err) {
    if (code(err) === 'ENOENT') return false;
    throw err;
  }
  const moved = inspect(aside);
  if (moved !== null && accept(moved)) {
    removeScratchLater(aside);
    return true;
  }
  try {
    renameSync(aside, path);
  } catch {
    removeScratch(aside);
  }
  return false;
}
