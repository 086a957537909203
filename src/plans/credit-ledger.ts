import type { Logger } from 'pino';
import { GatewayError, storageError } from '../domain/errors.js';
import { MAX_CREDITS, type CreditStore, type CreditsDoc } from '../store/credits.js';

/** A credit reserved for one send: its hold is on disk. commit() after the send, release() if it failed. */
export interface CreditHold {
  readonly instanceId: string;
  /** Debits the held credit durably; resolves with the balance after this send. */
  commit(): Promise<number>;
  /** The send did not happen: the credit is free again. */
  release(): void;
}

interface Waiter<T> {
  resolve(value: T): void;
  reject(err: unknown): void;
}

interface Account {
  readonly id: string;
  /** What the file holds (after the last successful write). */
  doc: CreditsDoc;
  /** Credits held in memory: holds being written, written, and commits not yet written. */
  held: number;
  holds: Array<{ hid: string } & Waiter<void>>;
  commits: Array<{ hid: string } & Waiter<number>>;
  releases: string[];
  adds: Array<{ amount: number } & Waiter<CreditsDoc>>;
  writing: boolean;
  removed: boolean;
  nextHold: number;
}

/**
 * The daemon's credit balances; the only writer of the credit files while the daemon runs (the CLI
 * goes through the daemon). Every send stores a hold before its message leaves, so a send never
 * goes out when its reservation cannot be stored (503 STORAGE_UNAVAILABLE), and debits it after
 * the send, before its 200. Writes of one instance are batched (group commit): the holds, debits,
 * releases and additions queued while a write is under way go out together in the next one.
 * Holds found at start-up belonged to sends a crash interrupted; they are released.
 */
export class CreditLedger {
  private readonly accounts = new Map<string, Account>();

  constructor(
    private readonly store: CreditStore,
    private readonly logger: Logger,
  ) {}

  private account(id: string): Account {
    let a = this.accounts.get(id);
    if (!a) {
      const doc = this.store.readSync(id);
      const stale = doc.held ? Object.keys(doc.held).length : 0;
      if (stale > 0) {
        this.logger.warn({ instanceId: id, holds: stale }, 'credit holds of sends interrupted by a crash released (those sends were not charged)');
      }
      a = { id, doc: { balance: doc.balance, spent: doc.spent, ...(stale > 0 ? { held: doc.held } : {}) }, held: 0, holds: [], commits: [], releases: stale > 0 ? Object.keys(doc.held!) : [], adds: [], writing: false, removed: false, nextHold: 1 };
      this.accounts.set(id, a);
      if (stale > 0) this.schedule(a);
    }
    return a;
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
   */
  async hold(id: string): Promise<CreditHold | null> {
    const a = this.account(id);
    if (a.removed || a.doc.balance - a.held <= 0) return null;
    a.held += 1;
    const hid = `h${a.nextHold++}`;
    try {
      await new Promise<void>((resolve, reject) => {
        a.holds.push({ hid, resolve, reject });
        this.schedule(a);
      });
    } catch (err) {
      a.held -= 1;
      throw err;
    }
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

  /** Adds credits durably; resolves with the new document. */
  add(id: string, amount: number): Promise<CreditsDoc> {
    const a = this.account(id);
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
    const a = this.accounts.get(id);
    if (!a) return;
    a.removed = true;
    const until = Date.now() + waitMs;
    while ((a.writing || a.held > 0 || a.holds.length + a.commits.length + a.adds.length + a.releases.length > 0) && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 5));
    }
    this.accounts.delete(id);
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
    const next: CreditsDoc = { balance: a.doc.balance, spent: a.doc.spent, held: { ...a.doc.held } };
    const held = next.held!;
    const refused: Array<{ waiter: Waiter<CreditsDoc>; err: GatewayError }> = [];
    const applied: typeof adds = [];
    for (const add of adds) {
      if (next.balance + add.amount > MAX_CREDITS) {
        refused.push({ waiter: add, err: new GatewayError('INVALID_FIELD', `credits: a balance above ${MAX_CREDITS} is not supported (now ${next.balance})`) });
        continue;
      }
      next.balance += add.amount;
      applied.push(add);
    }
    for (const h of holds) held[h.hid] = 1;
    for (const c of commits) {
      delete held[c.hid];
      next.balance -= 1;
      next.spent += 1;
    }
    for (const hid of releases) delete held[hid];
    if (Object.keys(held).length === 0) delete next.held;
    for (const r of refused) r.waiter.reject(r.err);
    // A release alone need not be durable: a lost one is released again at the next start.
    const durable = holds.length + commits.length + applied.length > 0;
    try {
      await this.store.write(a.id, next, durable);
      a.doc = next;
      a.held -= commits.length;
      holds.forEach((h) => h.resolve());
      // Each send learns the balance right after its own debit.
      commits.forEach((c, i) => c.resolve(next.balance + (commits.length - 1 - i)));
      applied.forEach((add) => add.resolve({ balance: next.balance, spent: next.spent }));
    } catch (err) {
      const failure = storageError(err, 'credits');
      this.logger.error({ instanceId: a.id, err }, 'credit write failed');
      holds.forEach((h) => h.reject(failure instanceof GatewayError ? failure : new GatewayError('STORAGE_UNAVAILABLE', 'the credit reservation could not be stored; nothing was sent', { cause: err })));
      applied.forEach((add) => add.reject(failure));
      // The messages of these commits went out: their debits stay queued for the next write.
      a.commits.unshift(...commits.map((c) => ({ hid: c.hid, resolve: () => undefined, reject: () => undefined })));
      commits.forEach((c) => c.reject(new GatewayError('STORAGE_UNAVAILABLE', 'the message was sent, but its debit could not be stored yet; do not resend it', { cause: err })));
      a.releases.unshift(...releases);
    } finally {
      a.writing = false;
      const more = a.holds.length + a.adds.length + a.releases.length > 0 || (a.commits.length > 0 && commits.length === 0);
      if (more) this.schedule(a);
      else if (a.commits.length > 0) setTimeout(() => this.schedule(a), 1_000).unref();
    }
  }

  /** Resolves once every write queued so far is on disk. */
  async drain(): Promise<void> {
    const busy = (): boolean => [...this.accounts.values()].some((a) => a.writing || a.holds.length + a.commits.length + a.adds.length > 0);
    const until = Date.now() + 10_000;
    while (busy() && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
  }
}
