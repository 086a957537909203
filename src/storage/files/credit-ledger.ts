import type { Logger } from 'pino';
import { GatewayError, storageError } from '../../domain/errors.js';
import { MAX_CREDITS, applyBatch, snapshotLine, type CreditBatch, type CreditState, type CreditStore, type CreditsDoc } from './credits.js';
import type { Journal } from './journal.js';
import { SettleSignal } from '../../domain/settle-signal.js';
import type { CreditHold, CreditRepository } from '../ports/credits.js';

export type { CreditHold };

interface Waiter<T> {
  resolve(value: T): void;
  reject(err: unknown): void;
}

interface Account {
  readonly id: string;
  /** What the journal holds (after the last successful write). */
  doc: CreditState;
  /** The open journal; null until the first write, and after a failed one. */
  journal: Journal | null;
  /** The next open must start the journal over from `doc` (migration, or after a failed write). */
  restart: boolean;
  /** Lines in the journal, for compaction. */
  lines: number;
  /** The last write failed (a full disk): new holds are refused until a write succeeds again. */
  failing: boolean;
  /** Credits held in memory: holds being written, written, and commits not yet written. */
  held: number;
  /** Holds on disk taken in advance, not yet given to a send (see `hold`). */
  pool: string[];
  /** Sends that took a hold from the pool since the last write: how fast the pool drains. */
  taken: number;
  holds: Array<{ hid: string } & Waiter<void>>;
  commits: Array<{ hid: string } & Waiter<number>>;
  releases: string[];
  adds: Array<{ amount: number } & Waiter<CreditsDoc>>;
  writing: boolean;
  removed: boolean;
  nextHold: number;
}

/** A journal is rewritten as one snapshot line after this many batches. */
const COMPACT_EVERY = 10_000;

/** The most holds an account keeps on disk in advance (see `hold`). */
const POOL_MAX = 64;

/**
 * The daemon's credit balances; the only writer of the credit files while the daemon runs (the CLI
 * goes through the daemon). Every send stores a hold before its message leaves, so a send never
 * goes out when its reservation cannot be stored (503 STORAGE_UNAVAILABLE), and debits it after
 * the send, before its 200. Writes of one instance are batched (group commit): the holds, debits,
 * releases and additions queued while a write is under way go out together in the next one.
 * Holds found at start-up belonged to sends a crash interrupted; they are released.
 */
export class CreditLedger implements CreditRepository {
  private readonly accounts = new Map<string, Account>();

  constructor(
    private readonly store: CreditStore,
    private readonly logger: Logger,
  ) {}

  /** Hold ids are unique across restarts, so a new hold never meets a stale one of the same name. */
  private readonly holdPrefix = `${Date.now().toString(36)}.`;

  /** Instances deleted while this daemon runs: a late send must not bring their file back. */
  private readonly forgotten = new Set<string>();
  /** Woken when a write ends or a hold is given up: forget and drain wait on it. */
  private readonly settled = new SettleSignal();

  /** The daemon stops: no more holds are taken in advance. */
  private closing = false;

  private account(id: string): Account {
    let a = this.accounts.get(id);
    if (!a && this.forgotten.has(id)) {
      // Never stored in `accounts`, so it never writes.
      return { id, doc: { balance: 0, spent: 0, held: new Set() }, journal: null, restart: false, lines: 0, failing: false, held: 0, pool: [], taken: 0, holds: [], commits: [], releases: [], adds: [], writing: false, removed: true, nextHold: 1 };
    }
    if (!a) {
      const loaded = this.store.loadSync(id);
      const stale = [...loaded.state.held];
      if (stale.length > 0) {
        this.logger.warn({ instanceId: id, holds: stale.length }, 'credit holds left by a crash released (sends it interrupted, or credits held in advance; none was charged)');
      }
      a = { id, doc: loaded.state, journal: null, restart: loaded.legacy, lines: loaded.lines, failing: false, held: 0, pool: [], taken: 0, holds: [], commits: [], releases: stale, adds: [], writing: false, removed: false, nextHold: 1 };
      this.accounts.set(id, a);
      if (stale.length > 0) this.schedule(a);
    }
    return a;
  }

  /**
   * Reads every credit journal, so a corrupt one stops start-up (naming it) instead of failing
   * sends, and removes the temp files of compactions a crash or a full disk interrupted. The ids
   * are not needed: the folder lists every account.
   */
  async open(_ids: Iterable<string>): Promise<void> {
    await this.store.verifyAll();
  }

  async remove(id: string): Promise<void> {
    await this.store.remove(id);
  }

  /** Credits not spent (on disk), including those held by sends in flight: what status shows. */
  balance(id: string): number {
    return this.account(id).doc.balance;
  }

  /** Credits a new send may hold now. */
  available(id: string): number {
    const a = this.account(id);
    return a.doc.balance - a.held;
  }

  /**
   * Reserves one credit and stores the hold durably; null when none is free. Rejects with
   * STORAGE_UNAVAILABLE when the hold cannot be stored (the send must not go out).
   *
   * While sends come in concurrently, the writes that carry their debits also store holds in
   * advance (the pool), so the next sends take a hold that is already on disk instead of waiting
   * for one more write: a send then waits for one durable write (its debit) instead of two. A pool
   * hold is an ordinary hold: never more are held than the balance, and whatever a crash leaves is
   * released at the next start, like the hold of a send the crash interrupted. Measured with 50
   * concurrent sends through the send service in one process (no HTTP): half the credit writes,
   * 2 to 3 µs less CPU per send (mostly the kernel's, in the writes) and about a fifth more sends
   * per second; each credit write also costs the event loop an idle wait and a wake-up.
   */
  async hold(id: string): Promise<CreditHold | null> {
    const a = this.account(id);
    if (a.removed || a.doc.balance - a.held <= 0) return null;
    // Back-pressure: while the store refuses writes, a send fails fast instead of leaving with a
    // reservation whose debit could not be written after it.
    if (a.failing) throw new GatewayError('STORAGE_UNAVAILABLE', 'the credit store could not be written a moment ago (disk full?); nothing was sent, retry later');
    a.held += 1;
    const pooled = a.pool.pop();
    if (pooled !== undefined) {
      a.taken += 1;
      return this.holdOf(a, id, pooled);
    }
    const hid = `${this.holdPrefix}${a.nextHold++}`;
    try {
      await new Promise<void>((resolve, reject) => {
        a.holds.push({ hid, resolve, reject });
        this.schedule(a);
      });
    } catch (err) {
      a.held -= 1;
      this.settled.wake();
      throw err;
    }
    return this.holdOf(a, id, hid);
  }

  /** The handle of a hold that is on disk. */
  private holdOf(a: Account, id: string, hid: string): CreditHold {
    let settled = false;
    return {
      instanceId: id,
      commit: () => {
        if (settled) return Promise.reject(new Error('credit hold already settled'));
        settled = true;
        return new Promise<number>((resolve, reject) => {
          a.commits.push({ hid, resolve, reject });
          this.schedule(a);
        });
      },
      release: () => {
        if (settled) return;
        settled = true;
        a.held -= 1;
        a.releases.push(hid);
        this.schedule(a);
      },
    };
  }

  /** Adds credits durably; resolves with the new balance and spent. */
  add(id: string, amount: number): Promise<CreditsDoc> {
    const a = this.account(id);
    if (a.removed) return Promise.reject(new GatewayError('NOT_FOUND', 'the instance was deleted'));
    return new Promise<CreditsDoc>((resolve, reject) => {
      a.adds.push({ amount, resolve, reject });
      this.schedule(a);
    });
  }

  /**
   * The instance is being deleted: its account takes no new holds, and this resolves once every send
   * in flight settled and its writes are on disk (at most `waitMs`), so the credit file can be
   * removed without a late debit writing it back.
   */
  async forget(id: string, waitMs = 60_000): Promise<void> {
    this.forgotten.add(id);
    const a = this.accounts.get(id);
    if (!a) return;
    a.removed = true;
    a.pool = [];
    await this.settled.until(() => !(a.writing || a.held > 0 || a.holds.length + a.commits.length + a.adds.length + a.releases.length > 0), waitMs);
    this.accounts.delete(id);
    await a.journal?.close().catch(() => undefined);
    a.journal = null;
  }

  private schedule(a: Account): void {
    // A forgotten account (deleted instance) never writes again: its file is being removed.
    if (a.writing || this.accounts.get(a.id) !== a) return;
    a.writing = true;
    setImmediate(() => void this.write(a));
  }

  private async write(a: Account): Promise<void> {
    const holds = a.holds.splice(0);
    const commits = a.commits.splice(0);
    const releases = a.releases.splice(0);
    const adds = a.adds.splice(0);
    const refused: Array<{ waiter: Waiter<CreditsDoc>; err: GatewayError }> = [];
    const applied: typeof adds = [];
    let added = 0;
    for (const add of adds) {
      if (a.doc.balance + added + add.amount > MAX_CREDITS) {
        refused.push({ waiter: add, err: new GatewayError('INVALID_FIELD', `credits: a balance above ${MAX_CREDITS} is not supported (now ${a.doc.balance + added})`) });
        continue;
      }
      if (add.amount < 0) {
        // A refund takes back only credits no send holds: a send in flight keeps the one it
        // reserved. Holds taken in advance (the pool) are given back first if it needs them.
        const free = a.doc.balance + added - a.held;
        if (free + add.amount < 0) {
          refused.push({ waiter: add, err: new GatewayError('INSUFFICIENT_CREDITS', `cannot take back ${-add.amount} credits: ${Math.max(0, free)} are free to take back`) });
          continue;
        }
        while (a.pool.length > 0 && free - a.pool.length + add.amount < 0) releases.push(a.pool.pop()!);
      }
      added += add.amount;
      applied.push(add);
    }
    for (const r of refused) r.waiter.reject(r.err);
    // The pool (see `hold`): refilled while sends come in concurrently (two or more since the last
    // write), up to twice what they took, from credits neither held nor in the pool. A lone send
    // holds only its own credit, as before.
    const demand = a.taken + holds.length;
    a.taken = 0;
    const refill: string[] = [];
    if (demand >= 2 && !a.removed && !this.closing) {
      const want = Math.min(POOL_MAX, 2 * demand) - a.pool.length;
      const free = a.doc.balance - a.held - a.pool.length;
      for (let i = Math.min(want, free); i > 0; i--) refill.push(`${this.holdPrefix}${a.nextHold++}`);
    }
    const held = holds.length + refill.length > 0 ? [...holds.map((h) => h.hid), ...refill] : null;
    const batch: CreditBatch = {
      ...(added !== 0 ? { add: added } : {}),
      ...(releases.length > 0 ? { release: releases } : {}),
      ...(held ? { hold: held } : {}),
      ...(commits.length > 0 ? { commit: commits.map((c) => c.hid) } : {}),
    };
    // A release alone need not be durable: a lost one is released again at the next start.
    const durable = holds.length + refill.length + commits.length + applied.length > 0;
    try {
      // After a failure an empty batch still reopens the journal: the restart is the probe that
      // tells whether the disk takes writes again.
      if (Object.keys(batch).length > 0 || a.restart) {
        const journal = await this.journalOf(a);
        if (Object.keys(batch).length > 0) {
          const line = JSON.stringify(batch);
          if (durable) await journal.append(line).durable;
          else journal.appendLazy(line);
          applyBatch(a.doc, batch);
          a.lines += 1;
        }
      }
      a.failing = false;
      a.held -= commits.length;
      a.pool.push(...refill);
      holds.forEach((h) => h.resolve());
      // Each send learns the balance right after its own debit.
      const balance = a.doc.balance;
      commits.forEach((c, i) => c.resolve(balance + (commits.length - 1 - i)));
      applied.forEach((add) => add.resolve({ balance, spent: a.doc.spent }));
      if (a.lines >= COMPACT_EVERY && a.journal) await this.compact(a, a.journal);
    } catch (err) {
      // The journal may hold part of this batch: the next write starts it over from what is acknowledged.
      a.restart = true;
      a.failing = true;
      const broken = a.journal;
      a.journal = null;
      await broken?.close().catch(() => undefined);
      const failure = storageError(err, 'credits');
      this.logger.error({ instanceId: a.id, err }, 'credit write failed');
      const why = (err as NodeJS.ErrnoException | null)?.code ?? 'write failed';
      holds.forEach((h) => h.reject(new GatewayError('STORAGE_UNAVAILABLE', `the credit reservation could not be stored (${why}); nothing was sent`, { cause: err })));
      applied.forEach((add) => add.reject(failure));
      // The messages of these commits went out: their debits stay queued for the next write.
      a.commits.unshift(...commits.map((c) => ({ hid: c.hid, resolve: () => undefined, reject: () => undefined })));
      commits.forEach((c) => c.reject(new GatewayError('STORAGE_UNAVAILABLE', 'the message was sent, but its debit could not be stored yet; do not resend it', { cause: err })));
      a.releases.unshift(...releases);
    } finally {
      a.writing = false;
      // After the sends this write answered have run their continuations (a refused hold gives its
      // credit back in a microtask).
      setImmediate(() => this.settled.wake());
      // Debits queued while this write was under way go out at once (they used to wait for the
      // next send to call `schedule`, up to a whole round of requests later); after a failed
      // write the debits put back are retried in a second, not in a loop.
      const more = a.holds.length + a.adds.length + a.releases.length > 0 || (a.commits.length > 0 && !a.failing);
      if (more) this.schedule(a);
      else if (a.commits.length > 0 || a.failing) setTimeout(() => this.schedule(a), 1_000).unref();
    }
  }

  /** Rewrites a long journal as one snapshot line; a failure only means it is started over later. */
  private async compact(a: Account, journal: Journal): Promise<void> {
    try {
      await journal.rewrite([snapshotLine(a.doc)]);
      a.lines = 1;
    } catch (err) {
      this.logger.warn({ instanceId: a.id, err }, 'credit journal compaction failed; retried at the next write');
      a.restart = true;
      a.journal = null;
      await journal.close().catch(() => undefined);
    }
  }

  private async journalOf(a: Account): Promise<Journal> {
    if (a.journal) return a.journal;
    const journal = await this.store.openJournal(a.id, a.doc, a.restart);
    a.restart = false;
    if (this.accounts.get(a.id) !== a) {
      // Forgotten (deleted) while opening.
      await journal.close();
      throw new GatewayError('NOT_FOUND', 'the instance was deleted');
    }
    a.journal = journal;
    return journal;
  }

  /** Writes what is queued and closes every journal (the daemon stops). */
  async close(): Promise<void> {
    // Holds taken in advance are given back, so a clean restart finds none.
    this.closing = true;
    for (const a of this.accounts.values()) {
      if (a.pool.length === 0) continue;
      a.releases.push(...a.pool.splice(0));
      this.schedule(a);
    }
    await this.drain();
    for (const a of this.accounts.values()) {
      await a.journal?.close().catch(() => undefined);
      a.journal = null;
    }
  }

  /** Resolves once every write queued so far is on disk. */
  async drain(): Promise<void> {
    const busy = (): boolean => [...this.accounts.values()].some((a) => a.writing || a.holds.length + a.commits.length + a.adds.length + a.releases.length > 0);
    await this.settled.until(() => !busy(), 10_000);
    // Lines written lazily (releases alone) are on disk once their journal drained.
    for (const a of this.accounts.values()) await a.journal?.drain().catch(() => undefined);
  }
}
