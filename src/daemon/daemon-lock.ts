import { readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import lockfile from 'proper-lockfile';
import { UserError } from '../domain/errors.js';
import { FILE_MODE, writeFileAtomic } from '../store/atomic-write.js';
import { storePaths } from '../store/paths.js';

export interface DaemonInfo {
  pid: number;
  host: string;
  port: number;
  startedAt: string;
}

/**
 * One daemon per data dir: two would both drive the same WhatsApp sessions and both debit credits.
 * The lock is a proper-lockfile lock kept fresh while the daemon lives; `daemon.json` tells the CLI
 * where it listens.
 */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A killed daemon its parent has not reaped yet is a zombie: dead for our purposes.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/** The lock of a daemon that was killed (kill -9, OOM) without releasing it. */
function isOrphaned(dataDir: string): boolean {
  try {
    const info = JSON.parse(readFileSync(`${dataDir}/daemon.json`, 'utf8')) as Partial<DaemonInfo>;
    return typeof info.pid === 'number' && info.pid > 0 && info.pid !== process.pid && !alive(info.pid);
  } catch {
    return false;
  }
}

export async function acquireDaemonLock(dataDir: string): Promise<() => Promise<void>> {
  const paths = storePaths(dataDir);
  writeFileSync(paths.daemonLock, '', { mode: FILE_MODE, flag: 'a' });
  // A daemon killed with SIGKILL leaves its lock behind; its pid tells us it is gone, so a restart
  // (systemd Restart=on-failure) need not wait for the lock to go stale.
  if (isOrphaned(dataDir)) {
    // proper-lockfile only unlocks its own locks; its lock is the `<file>.lock` directory.
    await rm(`${paths.daemonLock}.lock`, { recursive: true, force: true });
  }
  try {
    const release = await lockfile.lock(paths.daemonLock, {
      realpath: false,
      stale: 10_000,
      update: 2_000,
      retries: 0,
      onCompromised: (err) => {
        process.stderr.write(`gateway: daemon lock lost (${err.message}); exiting\n`);
        process.exit(1);
      },
    });
    await writeDaemonInfo(dataDir, { pid: process.pid, host: '', port: 0, startedAt: new Date().toISOString() });
    return async () => {
      await rm(`${paths.dataDir}/daemon.json`, { force: true });
      await release().catch(() => undefined);
    };
  } catch {
    throw new UserError(`another gateway daemon is already running on ${dataDir}`);
  }
}

export async function writeDaemonInfo(dataDir: string, info: DaemonInfo): Promise<void> {
  await writeFileAtomic(`${dataDir}/daemon.json`, JSON.stringify(info));
}

/** The running daemon, if its lock is held; null when none runs. */
export async function runningDaemon(dataDir: string): Promise<DaemonInfo | null> {
  const paths = storePaths(dataDir);
  let locked = false;
  try {
    locked = await lockfile.check(paths.daemonLock, { realpath: false, stale: 10_000 });
  } catch {
    return null;
  }
  if (!locked) return null;
  try {
    return JSON.parse(readFileSync(`${dataDir}/daemon.json`, 'utf8')) as DaemonInfo;
  } catch {
    return { pid: 0, host: '', port: 0, startedAt: '' };
  }
}
