import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { GatewayError, errorMessage } from '../../domain/errors.js';
import { writeFileAtomic, type WriteGuard } from '../../fs/atomic-write.js';
import { removeDataDirLeftovers } from './leftovers.js';
import { LockBusyError, acquireLock, ownerAlive, readLockOwner, type HeldLock } from './owner-lock.js';
import { storePaths } from './paths.js';

/**
 * Who holds the data dir: the daemon (it is the only writer while it runs; the CLI goes through its
 * control socket), `gateway pair` pairing with no daemon, or a CLI command changing the store
 * while no daemon runs. One at a time: two would both drive the same WhatsApp sessions and both
 * write the store.
 */
export type HolderKind = 'daemon' | 'pair' | 'cli';

export interface DaemonInfo {
  pid: number;
  host: string;
  port: number;
  startedAt: string;
}

export interface Holder {
  kind: HolderKind | string;
  pid: number;
  since: string;
}

/** The live holder of the data dir, if any (a dead one's lock is not a holder). */
export function dataDirHolder(dataDir: string): Holder | null {
  const owner = readLockOwner(storePaths(dataDir).lock);
  if (!owner || !ownerAlive(owner)) return null;
  return { kind: owner.kind, pid: owner.pid, since: owner.acquiredAt };
}

function describe(h: Holder): string {
  if (h.kind === 'daemon') return `the gateway daemon (pid ${h.pid}) runs on this data dir`;
  if (h.kind === 'pair') return `a \`gateway pair\` (pid ${h.pid}) is pairing on this data dir; let it finish or stop it`;
  return `another gateway command (pid ${h.pid}) is changing this data dir`;
}

/**
 * Takes the data dir lock for `kind`, waiting up to `waitMs` for a short-lived holder (another CLI
 * command). From then on every store commit checks that the lock is still held. Temp files of
 * writers that died are removed.
 */
export async function lockDataDir(dataDir: string, kind: HolderKind, waitMs: number): Promise<HeldLock> {
  const paths = storePaths(dataDir);
  let lock: HeldLock;
  try {
    lock = await acquireLock(paths.lock, { kind, waitMs });
  } catch (err) {
    if (err instanceof LockBusyError) {
      const h = dataDirHolder(dataDir);
      throw new GatewayError('STORE_LOCKED', h ? describe(h) : `${paths.lock} is locked`);
    }
    throw new GatewayError('STORE_LOCKED', `could not lock ${dataDir}: ${errorMessage(err)}`);
  }
  // The lock is the guard of every store this process opens on the data dir: a LockLostError (a
  // GatewayError, STORE_LOCK_LOST) fails the write, nothing is committed.
  await removeDataDirLeftovers(paths, { lockHeld: true });
  return lock;
}

/** Releases the lock taken by lockDataDir (its stores' writes fail from then on). */
export async function unlockDataDir(lock: HeldLock): Promise<void> {
  await lock.release();
}

export async function writeDaemonInfo(dataDir: string, info: DaemonInfo, guard: WriteGuard): Promise<void> {
  await writeFileAtomic(storePaths(dataDir).daemonInfo, JSON.stringify(info), { guard });
}

export async function removeDaemonInfo(dataDir: string): Promise<void> {
  await rm(storePaths(dataDir).daemonInfo, { force: true });
}

/** Where the running daemon listens (for doctor); null when none runs. */
export function runningDaemon(dataDir: string): DaemonInfo | null {
  const h = dataDirHolder(dataDir);
  if (h?.kind !== 'daemon') return null;
  try {
    return JSON.parse(readFileSync(storePaths(dataDir).daemonInfo, 'utf8')) as DaemonInfo;
  } catch {
    return { pid: h.pid, host: '', port: 0, startedAt: h.since };
  }
}
