import { randomBytes } from 'node:crypto';
import { statSync, utimesSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { GatewayError, errorMessage } from '../../domain/errors.js';
import { OWNER_FILE, inspect, install, removeIf, removeOwn, tokenFile, type LockOwner, type Seen } from './lock-dir.js';
import { BOOT_ID, HOST, OWN_START_TIME, PID_NAMESPACE, processRunning } from './process-identity.js';

export type { LockOwner } from './lock-dir.js';

/**
 * A cross-process lock that knows its owner. Design notes: docs/locking.md.
 *
 * - The lock is a directory holding the owner record, created whole by a rename.
 * - A contender takes it over at once when the owner is dead (pid gone, zombie, pid reused, other
 *   boot), and otherwise only when it has not been refreshed for `staleMs` (a stalled owner).
 * - Takeovers run one at a time under a short-lived guard, and remove a lock only after checking,
 *   once it is moved aside, that it is the one judged stale and still is.
 * - The holder refreshes it on an unref'd timer and checks before every commit (`assertHeld`, one
 *   stat) that it still holds it, so a holder that stalled past `staleMs` and lost the lock stops
 *   instead of writing what it read before.
 */

export interface LockOptions {
  /** What takes the lock ("daemon", "pair", "store", ...): kept in the owner record. */
  kind: string;
  /** How long to wait for a live holder; 0 fails at once. Default 1.5 x staleMs. */
  waitMs?: number;
  /** A live owner that has not refreshed for this long is taken over. Default 10 s. */
  staleMs?: number;
  /** How often the holder refreshes. Default staleMs / 3. */
  refreshMs?: number;
  /** Called once if the lock is found taken over. */
  onLost?: (err: LockLostError) => void;
}

export interface HeldLock {
  readonly path: string;
  readonly owner: LockOwner;
  /** True once the lock was found taken over; nothing may be committed under it any more. */
  readonly lost: boolean;
  /**
   * Throws LockLostError unless the lock on disk still carries this holder's token. Synchronous
   * and cheap (one stat; a refresh too when the timer is late): call it right before each commit.
   */
  assertHeld(): void;
  /** Adds a callback for loss; returns its removal. */
  onLost(callback: (err: LockLostError) => void): () => void;
  /** Removes the lock if it is still this holder's; never another's. */
  release(): Promise<void>;
}

/** The lock was taken over (or released) before a commit: the caller must not write. */
export class LockLostError extends GatewayError {
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super('STORE_LOCK_LOST', `${path}: store lock lost (${reason}); refusing to write`);
    this.name = 'LockLostError';
  }
}

/** A live holder kept the lock longer than the caller would wait. */
export class LockBusyError extends GatewayError {
  constructor(
    readonly path: string,
    readonly owner: LockOwner | null,
    waitedMs: number,
  ) {
    const who = owner ? `pid ${owner.pid} (${owner.kind}) since ${owner.acquiredAt}` : 'an unknown owner';
    super('STORE_LOCKED', `${path}: locked by ${who}; gave up after ${waitedMs} ms`);
    this.name = 'LockBusyError';
  }
}

/** Tokens of the locks this process holds: a lock with our pid and another token is an orphan. */
const LIVE_TOKENS = new Set<string>();

/**
 * Whether the process that holds a lock still runs. On another host or in another pid namespace
 * that cannot be seen: assumed alive, until the lock goes stale.
 */
export function ownerAlive(owner: LockOwner): boolean {
  if (owner.host !== HOST) return true;
  if (owner.bootId !== null && BOOT_ID !== null && owner.bootId !== BOOT_ID) return false;
  // Another pid namespace (a container sharing the data dir): its pids mean nothing here.
  if (owner.pidNamespace !== null && PID_NAMESPACE !== null && owner.pidNamespace !== PID_NAMESPACE) return true;
  if (owner.pid === process.pid && (owner.startTime === null || owner.startTime === OWN_START_TIME)) return LIVE_TOKENS.has(owner.token);
  return processRunning(owner.pid, owner.startTime);
}

/** Who holds the lock at `path`, or null when nobody does (or its record cannot be read). */
export function readLockOwner(path: string): LockOwner | null {
  return inspect(path)?.owner ?? null;
}

type Verdict = 'held' | 'dead' | 'stale';

function judge(seen: Seen, staleMs: number): Verdict {
  if (seen.owner !== null && !ownerAlive(seen.owner)) return 'dead';
  return Date.now() - seen.mtimeMs >= staleMs ? 'stale' : 'held';
}

function newOwner(kind: string): LockOwner {
  return { pid: process.pid, startTime: OWN_START_TIME, bootId: BOOT_ID, pidNamespace: PID_NAMESPACE, host: HOST, token: randomBytes(16).toString('hex'), kind, acquiredAt: new Date().toISOString() };
}

/**
 * Removes the dead or stale lock at `path`, if it still is one, under a guard so that contenders
 * take over one at a time. The guard lives for microseconds; one left by a crashed or stalled
 * contender is judged like a lock and removed the same careful way (it has no guard of its own:
 * two guards at once would still remove nothing that is not dead or stale). True when `path` is
 * free to try again at once.
 */
function takeOver(path: string, staleMs: number): boolean {
  const guardPath = `${path}.takeover`;
  const guard = newOwner('takeover');
  if (!install(guardPath, guard)) {
    const g = inspect(guardPath);
    // Gone meanwhile, or left by a contender killed in the middle of its takeover and removed now:
    // try again at once. Waiting instead failed a daemon that waits for nobody (`waitMs` 0 when
    // the holder is dead) after an `init --force` killed in that instant (CI, rotation-crash).
    if (g === null) return true;
    return judge(g, staleMs) !== 'held' && removeIf(guardPath, (m) => m.identity === g.identity && judge(m, staleMs) !== 'held');
  }
  try {
    // Judged again under the guard: the owner may have released, refreshed or been replaced.
    const again = inspect(path);
    if (again === null) return true;
    if (judge(again, staleMs) === 'held') return false;
    // Not removed because it went meanwhile (released): free as well.
    return removeIf(path, (m) => m.identity === again.identity && judge(m, staleMs) !== 'held') || inspect(path) === null;
  } finally {
    removeIf(guardPath, (m) => m.owner?.token === guard.token);
  }
}

/**
 * One holder at a time per path inside this process, handed over in order without polling the
 * disk: concurrent store writes of one process queue here, other processes are met on disk.
 */
interface Gate {
  owner: LockOwner | null;
  waiters: Array<() => void>;
}
const gates = new Map<string, Gate>();

async function enterGate(key: string, path: string, deadline: number, started: number): Promise<Gate> {
  const gate = gates.get(key);
  if (gate === undefined) {
    const fresh: Gate = { owner: null, waiters: [] };
    gates.set(key, fresh);
    return fresh;
  }
  if (deadline <= performance.now()) throw new LockBusyError(path, gate.owner, Math.round(performance.now() - started));
  await new Promise<void>((done, fail) => {
    const waiter = (): void => {
      clearTimeout(timer);
      done();
    };
    const timer = setTimeout(() => {
      gate.waiters.splice(gate.waiters.indexOf(waiter), 1);
      fail(new LockBusyError(path, gate.owner, Math.round(performance.now() - started)));
    }, deadline - performance.now());
    gate.waiters.push(waiter);
  });
  return gate;
}

function leaveGate(key: string, gate: Gate): void {
  gate.owner = null;
  const next = gate.waiters.shift();
  if (next) next();
  else gates.delete(key);
}

function positive(name: string, value: number | undefined, fallback: number, allowZero = false): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (value === 0 && !allowZero)) {
    throw new TypeError(`${name}: expected a ${allowZero ? 'non-negative' : 'positive'} number of milliseconds, got ${String(value)}`);
  }
  return value;
}

function exists(file: string): boolean {
  try {
    statSync(file);
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Takes the lock at `path` (a directory; its parent must exist), waiting up to `waitMs` for a
 * live holder, taking over a dead or stale one at once. Throws LockBusyError when the wait runs
 * out, TypeError for bad options.
 */
export async function acquireLock(path: string, options: LockOptions): Promise<HeldLock> {
  if (typeof options.kind !== 'string' || options.kind === '') throw new TypeError('kind: expected a non-empty string');
  const staleMs = positive('staleMs', options.staleMs, 10_000);
  const refreshMs = positive('refreshMs', options.refreshMs, staleMs / 3);
  if (refreshMs >= staleMs) throw new TypeError(`refreshMs: must be below staleMs (${staleMs}), got ${refreshMs}`);
  const waitMs = positive('waitMs', options.waitMs, staleMs * 1.5, true);
  const started = performance.now();
  const deadline = started + waitMs;
  const key = resolve(path);
  const gate = await enterGate(key, path, deadline, started);
  try {
    const owner = newOwner(options.kind);
    gate.owner = owner; // what in-process waiters are told they wait for
    let delay = 1;
    for (;;) {
      if (install(path, owner)) {
        const lock = new OwnerLock(path, owner, staleMs, refreshMs, () => leaveGate(key, gate));
        if (options.onLost) lock.onLost(options.onLost);
        return lock;
      }
      const seen = inspect(path);
      if (seen === null) continue; // released in between: try again at once
      if (judge(seen, staleMs) !== 'held' && takeOver(path, staleMs)) continue;
      const now = performance.now();
      if (now >= deadline) throw new LockBusyError(path, seen.owner, Math.round(now - started));
      // Jittered, growing sleeps: contenders that arrived together do not retry in step.
      await sleep(Math.min(delay * (0.5 + Math.random() / 2), deadline - now));
      delay = Math.min(delay * 2, 50);
    }
  } catch (err) {
    leaveGate(key, gate);
    if (err instanceof LockBusyError || err instanceof TypeError) throw err;
    throw new GatewayError('STORE_LOCKED', `${path}: could not take the lock (${errorMessage(err)})`);
  }
}

/** Runs `fn` holding the lock; releases it however `fn` ends. */
export async function withLock<R>(path: string, options: LockOptions, fn: (lock: HeldLock) => Promise<R>): Promise<R> {
  const lock = await acquireLock(path, options);
  try {
    return await fn(lock);
  } finally {
    await lock.release();
  }
}

class OwnerLock implements HeldLock {
  private lostError: LockLostError | null = null;
  private released = false;
  /** performance.now() of the last refresh known to have reached the disk. */
  private refreshedAt = performance.now();
  private readonly listeners = new Set<(err: LockLostError) => void>();
  private readonly timer: NodeJS.Timeout;
  private readonly ownerFile: string;
  private readonly marker: string;

  constructor(
    readonly path: string,
    readonly owner: LockOwner,
    private readonly staleMs: number,
    private readonly refreshMs: number,
    private readonly leave: () => void,
  ) {
    LIVE_TOKENS.add(owner.token);
    this.ownerFile = join(path, OWNER_FILE);
    this.marker = tokenFile(path, owner.token);
    this.timer = setInterval(() => this.tick(), refreshMs);
    this.timer.unref();
  }

  get lost(): boolean {
    return this.lostError !== null;
  }

  assertHeld(): void {
    if (this.lostError) throw this.lostError;
    if (this.released) throw new LockLostError(this.path, 'it was already released');
    this.check(() => statSync(this.marker));
    // The timer is late (a blocked event loop, a stop): refresh now, so that a contender cannot
    // judge the lock stale between this check and the commit that follows it.
    if (performance.now() - this.refreshedAt > this.refreshMs * 1.5) this.refresh();
  }

  onLost(callback: (err: LockLostError) => void): () => void {
    this.listeners.add(callback);
    return () => this.listeners.delete(callback);
  }

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    clearInterval(this.timer);
    LIVE_TOKENS.delete(this.owner.token);
    try {
      // Only a lock that still carries our token is moved aside, and removeOwn checks it again
      // once it is aside: a lock taken over meanwhile is never removed.
      if (this.lostError === null && exists(this.marker)) removeOwn(this.path, this.owner.token);
    } finally {
      this.leave();
    }
  }

  /**
   * Touches the owner record, then checks the token (if the lock was replaced in between, the
   * touch hit the new owner's record, which is harmless).
   */
  private refresh(): void {
    const now = new Date();
    this.check(() => {
      utimesSync(this.ownerFile, now, now);
      statSync(this.marker);
    });
    this.refreshedAt = performance.now();
  }

  /**
   * Runs a file check of the lock: a missing file means the lock was taken over (lost for good);
   * any other failure means it cannot be told, so the commit at hand is refused but the lock is
   * kept and the next refresh tries again.
   */
  private check(op: () => void): void {
    try {
      op();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') throw this.markLost('another process took it over');
      throw new LockLostError(this.path, `cannot check it: ${errorMessage(err)}`);
    }
  }

  private tick(): void {
    if (this.released || this.lostError) return;
    try {
      this.refresh();
    } catch {
      // Lost: markLost told the listeners. Otherwise the next tick tries again.
    }
  }

  private markLost(reason: string): LockLostError {
    if (this.lostError) return this.lostError;
    const err = new LockLostError(this.path, `${reason}; not refreshed for ${Math.round(performance.now() - this.refreshedAt)} ms, stale after ${this.staleMs} ms`);
    this.lostError = err;
    clearInterval(this.timer);
    LIVE_TOKENS.delete(this.owner.token);
    for (const listener of this.listeners) {
      try {
        listener(err);
      } catch (e) {
        process.emitWarning(`onLost callback for ${this.path} threw: ${errorMessage(e)}`);
      }
    }
    return err;
  }
}
