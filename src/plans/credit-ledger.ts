import type { Logger } from 'pino';
import type { CreditStore } from '../store/credits.js';

interface Account {
  balance: number;
  /** Credits held by sends in flight: reserved, not yet debited on disk. */
  held: number;
  pending: Array<(balanceAfter: number) => void>;
  pendingFailures: Array<(err: unknown) => void>;
  flushing: boolean;
  stale: boolean;
  /** Identity (inode) of the file our last debit wrote: its watch event is not news. */
  ownFile: string | null;
  /** Bumped by every debit write; a re-read begun before one must not overwrite its result. */
  version: number;
}

/** A credit reserved for one send; commit() after the send succeeded, release() if it failed. */
export interface CreditHold {
  readonly instanceId: string;
  commit(): Promise<number>;
  release(): void;
}

/**
 * The daemon's view of credit balances. The daemon is the only process that debits (the CLI only
 * adds), so it reserves credits in memory before a send and never oversells; after the send it
 * debits on disk, batching the debits of concurrent sends into one locked, fsynced write (group
 * commit), and answers 200 only once that write is durable.
 */
export class CreditLedger {
  private readonly accounts = new Map<string, Account>();
  private readonly loading = new Map<string, Promise<Account>>();

  constructor(
    private readonly store: CreditStore,
    private readonly logger: Logger,
  ) {}

  private async account(id: string): Promise<Account> {
    const known = this.accounts.get(id);
    if (known && !known.stale) return known;
    let loading = this.loading.get(id);
    if (!loading) {
      const versionAtStart = known?.version;
      loading = this.store.read(id).then((doc) => {
        const existing = this.accounts.get(id);
        if (existing) {
          // A debit written while we were reading is newer than what we read.
          if (!existing.flushing && existing.version === versionAtStart) {
            existing.balance = doc.balance;
            existing.stale = false;
          }
          return existing;
        }
        const fresh: Account = { balance: doc.balance, held: 0, pending: [], pendingFailures: [], flushing: false, stale: false, ownFile: null, version: 0 };
        this.accounts.set(id, fresh);
        return fresh;
      });
      this.loading.set(id, loading);
      void loading.finally(() => this.loading.delete(id)).catch(() => undefined);
    }
    return loading;
  }

  /** The balance on disk minus nothing held: what status shows. */
  async balance(id: string): Promise<number> {
    return (await this.account(id)).balance;
  }

  /** Cached balance if known (for cheap status overlays), else undefined. */
  cachedBalance(id: string): number | undefined {
    return this.accounts.get(id)?.balance;
  }

  /** The file changed on disk: re-read it on next use, unless the change was our own debit. */
  invalidate(id: string): void {
    const a = this.accounts.get(id);
    if (!a) return;
    if (a.ownFile !== null && a.ownFile === this.store.identity(id)) return;
    a.stale = true;
  }

  forget(id: string): void {
    this.accounts.delete(id);
  }

  /** Reserves one credit, or returns null when none is available (re-reading the file first). */
  async hold(id: string): Promise<CreditHold | null> {
    let a = await this.account(id);
    if (a.balance - a.held <= 0 && !a.flushing) {
      a.stale = true; // credits may have been added by the CLI a moment ago
      a = await this.account(id);
    }
    if (a.balance - a.held <= 0) return null;
    a.held += 1;
    let done = false;
    return {
      instanceId: id,
      commit: () => {
        if (done) throw new Error('credit hold already settled');
        done = true;
        return new Promise<number>((resolve, reject) => {
          a.pending.push(resolve);
          a.pendingFailures.push(reject);
          this.scheduleFlush(id, a);
        });
      },
      release: () => {
        if (done) return;
        done = true;
        a.held -= 1;
      },
    };
  }

  private scheduleFlush(id: string, a: Account): void {
    if (a.flushing) return;
    a.flushing = true;
    setImmediate(() => void this.flush(id, a));
  }

  private async flush(id: string, a: Account): Promise<void> {
    const resolvers = a.pending.splice(0);
    const rejecters = a.pendingFailures.splice(0);
    const n = resolvers.length;
    try {
      const { doc, debited } = await this.store.debit(id, n);
      if (debited < n) this.logger.warn({ instanceId: id, wanted: n, debited }, 'credit file held fewer credits than reserved (edited by hand?)');
      a.balance = doc.balance;
      a.version += 1;
      a.ownFile = this.store.identity(id);
      a.held -= n;
      // Each send learns the balance right after its own debit.
      resolvers.forEach((resolve, i) => resolve(Math.max(0, doc.balance + (n - 1 - i))));
    } catch (err) {
      a.held -= n;
      this.logger.error({ instanceId: id, err }, 'credit debit failed');
      rejecters.forEach((reject) => reject(err));
    } finally {
      if (a.pending.length > 0) {
        setImmediate(() => void this.flush(id, a));
      } else {
        a.flushing = false;
        if (a.stale) void this.account(id).catch(() => undefined);
      }
    }
  }

  /** Resolves once every debit already committed is on disk. */
  async drain(): Promise<void> {
    while ([...this.accounts.values()].some((a) => a.flushing || a.pending.length > 0)) {
      await new Promise((r) => setTimeout(r, 5));
    }
  }
}
