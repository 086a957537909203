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
export async function acquireDaemonLock(dataDir: string): Promise<() => Promise<void>> {
  const paths = storePaths(dataDir);
  writeFileSync(paths.daemonLock, '', { mode: FILE_MODE, flag: 'a' });
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
