import type { Logger } from 'pino';
import { GatewayError, errorMessage } from '../../domain/errors.js';
import { MAX_CREDITS } from '../../domain/limits.js';
import type { CreditHold, CreditRepository, CreditsDoc } from '../ports/credits.js';
import type { Db } from './db.js';
import type { LeaseEpochs } from './lease-epochs.js';
import { SettleSignal } from '../../domain/settle-signal.js';
import { CHANGES, LIVE_SESSIONS } from './session-sql.js';
import type { Session } from './session.js';

interface Waiter<T> {
  resolve(value: T): void;
  reject(err: unknown): void;
}

/** A debit asked for: a send's message left, and its hold becomes spent. */
interface Commit extends Waiter<number> {
  readonly n: number;
  /** Set once a batch with it failed: tells its send, if the database does not take it in time. */
  giveUp?: ReturnType<typeof setTimeout>;
  /** Its send was told (the debit is still written when the database takes it). */
  told?: boolean;
  tellNow?: () => void;
}

/** How long a debit the database did not take waits for it before its send is told (see write). */
export const DEBIT_WAIT_MS = 5_000;

/** A failed batch is tried again after this long, or this soon while sends wait for their debits. */
const RETRY_MS = 1_000;
const RETRY_WAITING_MS = 250;

/** The most spare holds an account keeps (see `Account.spare`). */
export const MAX_SPARE = 64;
/** Spare holds no send took for this long are given back (other nodes and refunds see them free). */
export const SPARE_IDLE_MS = 250;
/**
 * A spare is given to a send only this soon after the batch that stored it was sent: that batch's
 * fencing check (the lease, its epoch, unexpired) is then as recent for the send as its own hold's
 * write would have been, give or take this long, which is far below a lease's TTL (a node that
 * stopped past its lease finds its spares stale). Older spares go back.
 */
export const SPARE_FRESH_MS = 500;

interface Spare {
  readonly n: number;
  readonly epoch: number | null;
  /** When the batch that stored it was sent. */
  readonly at: number;
  /** The session connection it was stored under (while none is live, or after a reconnect, other processes may have released it). */
  readonly generation: number;
}

interface Account {
  readonly id: string;
  /** The row as this process last saw it (its own writes answer with it). */
  balance: number;
  spent: number;
  /** Holds in the database, of every process. */
  held: number;
  /** Holds asked for, not yet written, with the lease epoch they were asked under (migration 011). */
  holds: Array<{ n: number; epoch: number | null } & Waiter<number | null>>;
  commits: Commit[];
  /** Holds given back (their credit is free at once for `available`). */
  releases: number[];
  /** Holds whose write failed: maybe stored, so released (not counted as free until then). */
  doubtful: number[];
  writing: boolean;
  removed: boolean;
  /** Sends holding a credit of this process now. */
  inFlight: number;
  /**
   * Spare holds: stored in the database under this process's session like any hold, but not yet
   * given to a send (the files ledger's `pool` does the same). A busy instance's batch asks for as
   * many more holds as its sends asked for since the batch before (at least 2, at most MAX_SPARE,
   * at most half the credits left free), so most sends take a hold here without a round trip and
   * wait only for their debit's batch. A spare is given only while fresh (SPARE_FRESH_MS), under
   * the lease epoch and the session connection it was stored with; sends a batch refused (credits
   * ran out meanwhile) take spares before they are told no. Spares go back after SPARE_IDLE_MS
   * without a send, after a failed batch (none are asked for again until a batch with holds
   * succeeds), before a refund, on forget and on close; a crash releases them with every other hold
   * of the process (never charged).
   */
  spare: Spare[];
  /** A batch failed: no spares are asked for until one with holds of sends succeeds (a debit must not fail for a spare). */
  spareOff: boolean;
  /** Refunds waiting for the spares to go back: none are asked for meanwhile. */
  refunding: number;
  /** The batch being written asked for spares (a refund waits for it). */
  writingSpares: boolean;
  /** Spares a refund gave back, until their releases are written. */
  returning: Set<number>;
  /** Holds asked for since the last batch began (spares taken and holds queued): the next batch's spares. */
  demand: number;
  /** When a send last took a hold (spares unused since SPARE_IDLE_MS go back). */
  lastTake: number;
  spareTimer: ReturnType<typeof setTimeout> | null;
}

interface RowOut {
  balance: number;
  spent: number;
  held: number;
}

/**
 * Credits in PostgreSQL, exact across processes: every change is a conditional update of the
 * instance's row, and each hold is a row of its own (stored before the message leaves), so the
 * database never grants more holds than the balance and a debit happens only to a hold that is
 * there (a retried batch never debits twice).
 *
 * The credit row is the one hot row of a busy instance, and a transaction keeps it locked until
 * its commit is flushed; so, as the files ledger does, the work of one instance is batched: the
 * holds, debits and releases that arrive while a batch is being written go together in the next
 * one (one round trip, `gw_credit_batch`, one WAL flush for all of them).
 *
 * Balances are cached for `balance` and `available` (read on every send and status): every batch
 * answers with the row, and `add` (from any process) is announced on the changes channel, so the
 * other processes re-read that row. Debits are not announced: NOTIFY takes a database-wide lock at
 * commit, which would put every send of every instance in one line. *
 * A send waited for two batches (its hold's, then its debit's); with spare holds (`Account.spare`)
 * a busy instance's sends mostly wait for their debit's only. Four paired runs of `BENCH_ONLY=pg
 * node --import=tsx bench/run.ts` (one node on PostgreSQL on the 2-core machine, builds in turn):
 * 5,750 -> 6,102 sends/s on average (+6 %), every pair faster. Not more: the message row's batch,
 * which the 200 also waits for, and the CPU the three processes share bound it next.
 */
export class PgCredits implements CreditRepository {
  private readonly accounts = new Map<string, Account>();
  private readonly forgotten = new Set<string>();
  private nextHold = 1;
  private closing = false;
  /** Woken when a batch ends or a send settles: forget and close wait on it. */
  private readonly settled = new SettleSignal();

  constructor(
    private readonly db: Db,
    private readonly session: () => Session,
    private readonly logger: Logger,
    private readonly epochs: LeaseEpochs,
    private readonly debitWaitMs = DEBIT_WAIT_MS,
    private readonly spareIdleMs = SPARE_IDLE_MS,
  ) {}

  private account(id: string): Account {
    let a = this.accounts.get(id);
    if (!a) {
      a = { id, balance: 0, spent: 0, held: 0, holds: [], commits: [], releases: [], doubtful: [], writing: false, removed: this.forgotten.has(id), inFlight: 0, spare: [], spareOff: false, refunding: 0, writingSpares: false, returning: new Set(), demand: 0, lastTake: 0, spareTimer: null };
      if (!a.removed) this.accounts.set(id, a);
    }
    return a;
  }

  private see(a: Account, row: RowOut | undefined): void {
    a.balance = row?.balance ?? 0;
    a.spent = row?.spent ?? 0;
    a.held = row?.held ?? 0;
  }

  /**
   * Loads every account into the cache (a balance is read synchronously) and releases the holds
   * of processes that are gone (their sends' outcomes are unknown: never charged).
   */
  async open(_ids: Iterable<string>): Promise<void> {
    await this.releaseStale();
    await this.reloadAll();
  }

  /** Re-reads every account (after missed notifications). */
  async reloadAll(): Promise<void> {
    const { rows } = await this.db.query<RowOut & { instance_id: string }>('credits', 'SELECT instance_id, balance, spent, held FROM credits');
    for (const r of rows) this.see(this.account(r.instance_id), r);
  }

  async refresh(id: string): Promise<void> {
    await this.releaseStale().catch((err: unknown) => this.logger.warn({ err: errorMessage(err) }, 'could not release the credit holds of processes that are gone'));
    await this.changed(id);
  }

  /** Another process added credits or released holds of this instance: re-read its row. */
  async changed(id: string): Promise<void> {
    try {
      const { rows } = await this.db.query<RowOut>('credits', 'SELECT balance, spent, held FROM credits WHERE instance_id = $1', [id]);
      const a = this.account(id);
      // A batch of this process under way answers with a newer row anyway.
      if (!a.writing) this.see(a, rows[0]);
    } catch (err) {
      this.logger.warn({ instanceId: id, err: errorMessage(err) }, 'could not re-read credits another node changed');
    }
  }

  /**
   * Deletes the holds of sessions whose process is gone (their lock went with their connection)
   * and announces the instances whose credits that freed.
   */
  async releaseStale(): Promise<number> {
    const { rows } = await this.db.query<{ instance_id: string; n: number }>(
      'credits',
      `WITH live AS (${LIVE_SESSIONS}),
        gone AS (DELETE FROM credit_holds h WHERE NOT EXISTS (SELECT 1 FROM live WHERE live.session = h.session) RETURNING instance_id),
        per AS (SELECT instance_id, count(*)::integer AS n FROM gone GROUP BY instance_id)
      UPDATE credits c SET held = c.held - per.n FROM per WHERE c.instance_id = per.instance_id
      RETURNING c.instance_id, per.n, pg_notify($1, $2 || c.instance_id)`,
      [CHANGES, this.session().payload('credits', '')],
    );
    let n = 0;
    for (const r of rows) {
      n += r.n;
      this.logger.warn({ instanceId: r.instance_id, holds: r.n }, 'credit holds of a process that is gone released (sends it interrupted; none was charged)');
    }
    return n;
  }

  balance(id: string): number {
    return this.account(id).balance;
  }

  available(id: string): number {
    const a = this.account(id);
    // Spare holds count in `held` (they are stored) but are this process's to give.
    return a.balance - a.held - a.holds.length + a.releases.length + a.spare.length;
  }

  async hold(id: string): Promise<CreditHold | null> {
    const a = this.account(id);
    if (a.removed || this.available(id) <= 0) return null;
    a.demand += 1;
    a.lastTake = performance.now();
    const epoch = this.epochs.of(id);
    let n = this.takeSpare(a, epoch);
    if (n === null) {
      const asked = this.nextHold++;
      // The hold asked for, or a spare when the batch could not grant it, or null.
      n = await new Promise<number | null>((resolve, reject) => {
        a.holds.push({ n: asked, epoch, resolve, reject });
        this.schedule(a);
      });
      if (n === null) return null;
    }
    const held = n;
    a.inFlight += 1;
    let settled = false;
    return {
      instanceId: id,
      commit: () => {
        if (settled) return Promise.reject(new Error('credit hold already settled'));
        settled = true;
        return new Promise<number>((resolve, reject) => {
          a.commits.push({ n: held, resolve, reject });
          this.schedule(a);
        }).finally(() => {
          a.inFlight -= 1;
          this.settled.wake();
        });
      },
      release: () => {
        if (settled) return;
        settled = true;
        a.inFlight -= 1;
        a.releases.push(held);
        this.schedule(a);
      },
    };
  }

  /**
   * A fresh spare hold stored under `epoch` and the live session connection, or null; spares that
   * no longer qualify are given back (the newest is taken, so the older ones go first).
   */
  private takeSpare(a: Account, epoch: number | null): number | null {
    const last = a.spare[a.spare.length - 1];
    if (!last) return null;
    const now = performance.now();
    if (last.epoch !== epoch || last.generation !== this.session().generation || now - last.at > SPARE_FRESH_MS) {
      this.giveBackSpares(a);
      return null;
    }
    a.spare.pop();
    const oldest = a.spare[0];
    // Those stored under another epoch or connection, or stale, go back now.
    if (oldest && (oldest.epoch !== epoch || oldest.generation !== last.generation || now - oldest.at > SPARE_FRESH_MS)) {
      const keep = a.spare.filter((x) => x.epoch === epoch && x.generation === last.generation && now - x.at <= SPARE_FRESH_MS);
      a.releases.push(...a.spare.filter((x) => !keep.includes(x)).map((x) => x.n));
      a.spare = keep;
      this.schedule(a);
    }
    return last.n;
  }

  /** Every spare hold goes back (written with the next batch; a release need not be durable). */
  private giveBackSpares(a: Account): void {
    if (a.spareTimer) clearTimeout(a.spareTimer);
    a.spareTimer = null;
    if (a.spare.length === 0) return;
    const gone = a.spare.map((x) => x.n);
    a.releases.push(...gone);
    if (a.refunding > 0) for (const n of gone) a.returning.add(n);
    a.spare = [];
    this.schedule(a);
  }

  /** Gives the spares back once no send took a hold for SPARE_IDLE_MS. */
  private watchSpares(a: Account): void {
    if (a.spareTimer || a.spare.length === 0) return;
    const check = (): void => {
      a.spareTimer = null;
      if (a.spare.length === 0) return;
      const idle = performance.now() - a.lastTake;
      if (idle >= this.spareIdleMs || this.closing) this.giveBackSpares(a);
      else {
        a.spareTimer = setTimeout(check, this.spareIdleMs - idle);
        a.spareTimer.unref();
      }
    };
    a.spareTimer = setTimeout(check, this.spareIdleMs);
    a.spareTimer.unref();
  }

  async add(id: string, amount: number): Promise<CreditsDoc> {
    const a = this.account(id);
    if (a.removed) throw new GatewayError('NOT_FOUND', 'the instance was deleted');
    if (amount >= 0) return this.change(a, id, amount);
    // A refund may need the credits this process holds as spares: none is asked for until it is
    // written, and those there go back first (it waits up to 10 s for their releases).
    a.refunding += 1;
    try {
      this.giveBackSpares(a);
      await this.settled.until(() => a.spare.length === 0 && !a.writingSpares && a.returning.size === 0, 10_000);
      return await this.change(a, id, amount);
    } finally {
      a.refunding -= 1;
      if (a.refunding === 0) a.returning.clear();
    }
  }

  private async change(a: Account, id: string, amount: number): Promise<CreditsDoc> {
    const announce = this.session().payload('credits', id);
    let rows: RowOut[];
    if (amount >= 0) {
      if (amount > MAX_CREDITS) throw this.tooMany(a.balance);
      ({ rows } = await this.db.query<RowOut>(
        'credits',
        `WITH u AS (INSERT INTO credits AS c (instance_id, balance, spent, held) VALUES ($1, $2, 0, 0)
          ON CONFLICT (instance_id) DO UPDATE SET balance = c.balance + excluded.balance WHERE c.balance + excluded.balance <= ${MAX_CREDITS}
          RETURNING c.balance, c.spent, c.held)
        SELECT u.*, pg_notify($3, $4) FROM u`,
        [id, amount, CHANGES, announce],
      ));
    } else {
      // A refund takes back only credits no send holds (of any process).
      ({ rows } = await this.db.query<RowOut>(
        'credits',
        `WITH u AS (UPDATE credits SET balance = balance + $2 WHERE instance_id = $1 AND balance + $2 >= held RETURNING balance, spent, held)
        SELECT u.*, pg_notify($3, $4) FROM u`,
        [id, amount, CHANGES, announce],
      ));
    }
    if (rows[0]) {
      if (!a.writing) this.see(a, rows[0]);
      else a.balance = rows[0].balance;
      return { balance: rows[0].balance, spent: rows[0].spent };
    }
    const now = await this.db.query<RowOut>('credits', 'SELECT balance, spent, held FROM credits WHERE instance_id = $1', [id]);
    const row = now.rows[0];
    if (amount >= 0) throw this.tooMany(row?.balance ?? 0);
    const free = Math.max(0, (row?.balance ?? 0) - (row?.held ?? 0));
    throw new GatewayError('INSUFFICIENT_CREDITS', `cannot take back ${-amount} credits: ${free} are free to take back`);
  }

  private tooMany(balance: number): GatewayError {
    return new GatewayError('INVALID_FIELD', `credits: a balance above ${MAX_CREDITS} is not supported (now ${balance})`);
  }

  async forget(id: string, waitMs = 60_000): Promise<void> {
    this.forgotten.add(id);
    const a = this.accounts.get(id);
    if (!a) return;
    a.removed = true;
    this.giveBackSpares(a);
    await this.settled.until(() => !(a.writing || a.inFlight > 0 || a.holds.length + a.commits.length + a.releases.length + a.doubtful.length > 0), waitMs);
    this.accounts.delete(id);
  }

  async remove(id: string): Promise<void> {
    await this.db.query('credits', 'WITH h AS (DELETE FROM credit_holds WHERE instance_id = $1) DELETE FROM credits WHERE instance_id = $1', [id]);
    this.dropCached(id);
  }

  /** Forgets the cached account of an instance whose rows were removed (Storage.removeInstance). */
  dropCached(id: string): void {
    const a = this.accounts.get(id);
    if (a) {
      // Its rows are gone, or going: a batch still under way must not keep spares for it, and a
      // spare row the removal's statement did not see is released (the batch deletes hold rows
      // even when the credits row is gone).
      a.removed = true;
      this.giveBackSpares(a);
    }
    this.accounts.delete(id);
  }

  private schedule(a: Account): void {
    if (a.writing) return;
    a.writing = true;
    setImmediate(() => void this.write(a));
  }

  /** Writes one batch of an account (see the class comment). */
  private async write(a: Account): Promise<void> {
    // One epoch a batch: holds asked under another (the lease left and came back) go in the next.
    const current = this.epochs.of(a.id);
    const epoch = a.holds.length > 0 ? a.holds[0]!.epoch : current;
    let same = 0;
    while (same < a.holds.length && a.holds[same]!.epoch === epoch) same += 1;
    const holds = a.holds.splice(0, same);
    // Spares for the sends to come: when several asked for a hold since the last batch, the batch
    // writes anyway (holds or debits), under the current epoch and a live session connection, no
    // refund waits and no failure came since; at most half the credits this process sees free.
    const generation = this.session().generation;
    const free = a.balance - a.held - holds.length - a.holds.length;
    const wanted =
      a.demand >= 2 && !a.spareOff && a.refunding === 0 && !a.removed && !this.closing && epoch === current && generation !== null
        ? Math.min(MAX_SPARE - a.spare.length, a.demand, Math.floor(free / 2))
        : 0;
    a.demand = a.holds.length;
    const commits = a.commits.splice(0);
    const releases = a.releases.splice(0);
    const doubtful = a.doubtful.splice(0);
    const gone = [...releases, ...doubtful];
    let failed = false;
    const spares: number[] = [];
    try {
      if (holds.length + commits.length + gone.length === 0) return;
      // Releases alone need not be durable: one lost in a crash is released at the next start.
      const lazy = holds.length + commits.length === 0;
      for (let i = 0; !lazy && i < wanted; i++) spares.push(this.nextHold++);
      const at = performance.now();
      a.writingSpares = spares.length > 0;
      const { rows } = await this.db.query<RowOut & { granted: number }>(
        'credits',
        'SELECT balance, spent, held, granted FROM gw_credit_batch($1, $2, $3, $4, $5, $6)',
        [a.id, this.session().id, commits.map((c) => c.n), gone, [...holds.map((h) => h.n), ...spares], epoch],
        lazy,
      );
      const row = rows[0]!;
      this.see(a, row);
      // The sends' holds come first; what is left of the grant is spare. A send the batch could not
      // grant a hold (credits ran out meanwhile) takes a spare of this process if one is left.
      // (Under the epoch it asked with, if that is still this node's: a batch that grants nothing
      // inserts no row, so it was not fenced.)
      const now = this.epochs.of(a.id);
      holds.forEach((h, i) => h.resolve(i < row.granted ? h.n : h.epoch === now ? this.takeSpare(a, now) : null));
      for (const n of gone) a.returning.delete(n);
      if (holds.length > 0) a.spareOff = false;
      const spared = spares.slice(0, Math.max(0, row.granted - holds.length));
      if (a.removed || this.closing || a.refunding > 0 || this.epochs.of(a.id) !== epoch || this.session().generation !== generation) {
        a.releases.push(...spared);
        if (a.refunding > 0) for (const n of spared) a.returning.add(n);
      }
      else {
        a.spare.push(...spared.map((n) => ({ n, epoch, at, generation: generation! })));
        if (spared.length > 0) this.watchSpares(a);
      }
      // Each send learns the balance right after its own debit.
      commits.forEach((c, i) => {
        clearTimeout(c.giveUp);
        c.resolve(row.balance + (commits.length - 1 - i));
      });
    } catch (err) {
      failed = true;
      this.logger.error({ instanceId: a.id, err: errorMessage(err) }, 'credit write failed');
      const unavailable = err instanceof GatewayError ? err : new GatewayError('STORAGE_UNAVAILABLE', `the credit store failed (${errorMessage(err)}); nothing was sent`, { cause: err });
      // These holds may have been stored before the answer was lost: they are given back.
      a.doubtful.push(...holds.map((h) => h.n), ...spares, ...doubtful);
      // No spare is given after a failure, nor asked for until a batch with holds succeeds: the
      // debits retried must not fail again for a spare (their messages left).
      a.spareOff = true;
      this.giveBackSpares(a);
      a.releases.unshift(...releases);
      // A lease that moved is said as such (503 INSTANCE_MOVING, retry): nothing was sent.
      const refusal = unavailable.code === 'INSTANCE_MOVING' ? unavailable : new GatewayError('STORAGE_UNAVAILABLE', `the credit reservation could not be stored (${unavailable.message}); nothing was sent`, { cause: err, retryAfter: unavailable.retryAfter ?? 2 });
      holds.forEach((h) => h.reject(refusal));
      // The messages of these commits went out: their debits stay queued and are written once the
      // database takes them (a debit already written is not repeated: its hold is gone). Their sends
      // wait up to debitWaitMs for that (a database restart takes a few seconds: the send is then
      // answered as usual), and are told otherwise (500 SENT_NOT_RECORDED: do not resend).
      for (const c of commits) {
        if (c.giveUp !== undefined) continue;
        c.tellNow = () => {
          if (c.told === true) return;
          c.told = true;
          clearTimeout(c.giveUp);
          const tell = c.reject;
          c.resolve = () => undefined;
          c.reject = () => undefined;
          tell(new GatewayError('STORAGE_UNAVAILABLE', 'the message was sent, but its debit could not be stored yet; do not resend it', { cause: err }));
        };
        c.giveUp = setTimeout(c.tellNow, this.debitWaitMs);
      }
      a.commits.unshift(...commits);
    } finally {
      a.writing = false;
      a.writingSpares = false;
      setImmediate(() => this.settled.wake());
      const waiting = a.holds.length + a.commits.length + a.releases.length + a.doubtful.length > 0;
      if (waiting && !failed) this.schedule(a);
      else if (waiting && !this.closing) setTimeout(() => this.schedule(a), a.commits.some((c) => c.told !== true) ? RETRY_WAITING_MS : RETRY_MS).unref();
    }
  }

  /** Writes what is queued (for at most 10 s if the database is away). */
  async close(): Promise<void> {
    this.closing = true;
    for (const a of this.accounts.values()) this.giveBackSpares(a);
    const busy = (): boolean => [...this.accounts.values()].some((a) => a.writing || a.holds.length + a.commits.length + a.releases.length + a.doubtful.length > 0);
    for (const a of this.accounts.values()) if (!a.writing && busy()) this.schedule(a);
    // A batch that failed is not tried again on its own while closing (see write): every 100 ms here.
    const until = Date.now() + 10_000;
    while (busy() && Date.now() < until) {
      for (const a of this.accounts.values()) if (!a.writing && a.holds.length + a.commits.length + a.releases.length + a.doubtful.length > 0) this.schedule(a);
      await this.settled.until(() => !busy(), Math.min(100, until - Date.now()));
    }
    // Sends still waiting for their debits are told now. A debit not written by then goes with this
    // process: its hold is released later, as every hold of a process that is gone (never charged).
    for (const a of this.accounts.values()) for (const c of a.commits) c.tellNow?.();
  }
}
