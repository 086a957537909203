import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * Who a process is, for judging locks and temp files it left behind. A pid alone is not enough:
 * pids are reused (in a container the daemon is pid 1 after every restart), so a record also keeps
 * the process's start time (field 22 of /proc/<pid>/stat, clock ticks since boot) and the boot id;
 * together they name one process. Where /proc is missing (not Linux) only the pid is known.
 */

const HAS_PROC = existsSync('/proc/self/stat');

export interface ProcStat {
  /** Field 3: R, S, D, Z (zombie), X (dead), ... */
  state: string;
  /** Field 22: start time in clock ticks since boot. */
  startTime: number;
}

/** Fields of /proc/<pid>/stat, or null when it cannot be read (gone, hidden, or no /proc). */
export function readProcStat(pid: number): ProcStat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name (field 2) is in parentheses and may hold spaces and ")"; fields after the
  // last ")" start at field 3, so field 22 is the 20th of them.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const startTime = Number(fields[19]);
  if (!fields[0] || !Number.isSafeInteger(startTime)) return null;
  return { state: fields[0], startTime };
}

function readTrimmed(file: string): string | null {
  try {
    return readFileSync(file, 'utf8').trim() || null;
  } catch {
    return null;
  }
}

/** This boot's id: a lock written before a reboot names a process that no longer exists. */
export const BOOT_ID: string | null = readTrimmed('/proc/sys/kernel/random/boot_id');
export const HOST: string = hostname();

/**
 * This process's pid namespace ("pid:[4026531836]"): a daemon in a container and a CLI on the host
 * can share a hostname and a data dir while their pids mean different processes.
 */
export const PID_NAMESPACE: string | null = (() => {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return null;
  }
})();
/** This process's start time as /proc records it (null without /proc). */
export const OWN_START_TIME: number | null = readProcStat(process.pid)?.startTime ?? null;

/**
 * Whether `pid` runs and is the process that started at `startTime` (null: not known, trust the
 * pid). False for a pid that is gone, a zombie (killed, not yet reaped by its parent) and a pid
 * now used by another process.
 */
export function processRunning(pid: number, startTime: number | null): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  let sameUser = true;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
    sameUser = false; // exists, owned by someone else; /proc may hide it (hidepid)
  }
  const stat = readProcStat(pid);
  if (stat === null) return !(HAS_PROC && sameUser); // ours and unreadable: it exited just now
  if (stat.state === 'Z' || stat.state === 'X') return false;
  return startTime === null || stat.startTime === startTime;
}

const OWN_STARTED_AT_MS = Date.now() - process.uptime() * 1000;

/**
 * Boot time and milliseconds per clock tick for turning /proc start times into dates. USER_HZ is
 * 100 nearly everywhere, but it is only trusted when this process's own start time agrees with it
 * within a second; otherwise start dates of other processes are unknown.
 */
const CLOCK: { bootMs: number; tickMs: number } | null = (() => {
  const btime = /^btime (\d+)$/m.exec(readTrimmed('/proc/stat') ?? '')?.[1];
  if (btime === undefined || OWN_START_TIME === null) return null;
  const bootMs = Number(btime) * 1000;
  return Math.abs(bootMs + OWN_START_TIME * 10 - OWN_STARTED_AT_MS) < 1000 ? { bootMs, tickMs: 10 } : null;
})();

/** When `pid` started, in ms since the epoch, or null when that cannot be told reliably. */
export function processStartedAtMs(pid: number): number | null {
  if (pid === process.pid) return OWN_STARTED_AT_MS;
  const stat = readProcStat(pid);
  if (stat === null || CLOCK === null) return null;
  return CLOCK.bootMs + stat.startTime * CLOCK.tickMs;
}
