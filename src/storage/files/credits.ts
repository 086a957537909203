import { existsSync, readFileSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import Type, { type Static } from 'typebox';
import { errorMessage, storageError } from '../../domain/errors.js';
import { closed } from '../../schemas/common.js';
import { matches } from '../../schemas/check.js';
import { ensureDir, writeFileAtomic, type WriteGuard } from '../../fs/atomic-write.js';
import { corruptStore } from './json-file.js';
import { Journal } from './journal.js';
import { storePaths, type StorePaths } from './paths.js';

/** The largest balance an instance may hold (far below where integers stop being exact). */
export { MAX_CREDITS } from '../../domain/limits.js';
import { MAX_CREDITS } from '../../domain/limits.js';

/**
 * An instance's credits: `balance` counts every credit not yet spent, including the ones `held`
 * by sends in flight. A hold is stored before its message leaves and becomes a debit (balance - 1,
 * spent + 1) once the message was sent; a hold found at start-up belonged to a send whose outcome
 * a crash hid, and is released (the customer is never charged for it).
 */
export interface CreditsDoc {
  balance: number;
  /** Lifetime credits spent, for metrics and support. */
  spent: number;
}

/** The state a journal describes: the document plus the holds of sends in flight. */
export interface CreditState extends CreditsDoc {
  held: Set<string>;
}

/**
 * One line of `credits/<id>.jsonl`: a snapshot, or one batch of changes written together (group
 * commit: the additions, holds, debits and releases of every send that reached the ledger while
 * the previous batch was being written).
 */
const CreditLine = closed({
  snap: Type.Optional(closed({ balance: Type.Integer({ minimum: 0, maximum: MAX_CREDITS }), spent: Type.Integer({ minimum: 0 }) })),
  /** Credits added; negative: a refund (never below what is held). */
  add: Type.Optional(Type.Integer({ minimum: -MAX_CREDITS, maximum: MAX_CREDITS })),
  hold: Type.Optional(Type.Array(Type.String())),
  commit: Type.Optional(Type.Array(Type.String())),
  release: Type.Optional(Type.Array(Type.String())),
});
export type CreditBatch = Static<typeof CreditLine>;

/** The file of versions before the journal: one JSON document, migrated on the first write. */
const LegacyDoc = Type.Object({
  balance: Type.Integer({ minimum: 0, maximum: MAX_CREDITS }),
  spent: Type.Integer({ minimum: 0 }),
  held: Type.Optional(Type.Record(Type.String(), Type.Integer())),
});

/** Applies one batch to a state (replay and live writes share this). */
export function applyBatch(state: CreditState, b: CreditBatch): void {
  if (b.snap) {
    state.balance = b.snap.balance;
    state.spent = b.snap.spent;
    state.held.clear();
  }
  if (b.add) state.balance += b.add;
  for (const r of b.release ?? []) state.held.delete(r);
  for (const h of b.hold ?? []) state.held.add(h);
  for (const c of b.commit ?? []) {
    if (!state.held.delete(c)) continue;
    state.balance -= 1;
    state.spent += 1;
  }
}

/** The one line that describes a whole state (compaction, migration, recovery). */
export function snapshotLine(state: CreditState): string {
  const held = [...state.held];
  return JSON.stringify({ snap: { balance: state.balance, spent: state.spent }, ...(held.length > 0 ? { hold: held } : {}) } satisfies CreditBatch);
}

/** What loading an instance's credits found. */
export interface LoadedCredits {
  state: CreditState;
  /** Lines in the journal (compaction counts from here). */
  lines: number;
  /** Only the pre-journal JSON file exists: the first write migrates it. */
  legacy: boolean;
}

/**
 * Hot plan data: one small append-only journal per instance (`credits/<id>.jsonl`), so a debit
 * costs one appended line and one fdatasync shared by every send of its batch, whatever the number
 * of instances (before, each batch rewrote the file: temp file, fsync, rename, directory fsync).
 * Only the daemon's ledger writes; it compacts a journal to one snapshot line now and then.
 */
export class CreditStore {
  readonly paths: StorePaths;

  constructor(
    dataDir: string,
    private readonly guard: WriteGuard,
  ) {
    this.paths = storePaths(dataDir);
  }

  journalFile(id: string): string {
    return this.paths.credits(id).replace(/\.json$/, '.jsonl');
  }

  /**
   * Reads an instance's credits synchronously (a few hundred bytes: the ledger reads it once per
   * instance). A torn last line (a crash mid-write, never acknowledged) is ignored; any other line
   * that does not parse stops with STORE_CORRUPT, naming the file.
   */
  loadSync(id: string): LoadedCredits {
    const file = this.journalFile(id);
    const state: CreditState = { balance: 0, spent: 0, held: new Set() };
    let text: string | null = null;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (text !== null && text.length === 0) {
      // Every journal is created with a snapshot line (openJournal), so an empty one lost its
      // contents: reading it as a balance of 0 would silently take the customer's credits.
      throw corruptStore(file, 'the journal is empty (it always starts with a snapshot line, so its contents were lost); restore it from a backup, or remove it to start this instance at 0 credits');
    }
    if (text !== null && text.length > 0) {
      const complete = text.slice(0, text.lastIndexOf('\n') + 1);
      let lines = 0;
      let offset = 0;
      for (const line of complete.split('\n')) {
        if (line.length === 0) continue;
        let value: unknown;
        try {
          value = JSON.parse(line);
        } catch (err) {
          throw corruptStore(file, `line at byte ${offset}: ${errorMessage(err)}`);
        }
        if (!matches(CreditLine, value)) throw corruptStore(file, `unexpected line at byte ${offset}`);
        applyBatch(state, value);
        lines += 1;
        offset += Buffer.byteLength(line) + 1;
      }
      if (lines > 0) return { state, lines, legacy: false };
    }
    const legacy = this.readLegacy(id);
    if (!legacy) return { state, lines: 0, legacy: false };
    state.balance = legacy.balance;
    state.spent = legacy.spent;
    for (const h of Object.keys(legacy.held ?? {})) state.held.add(h);
    return { state, lines: 0, legacy: true };
  }

  private readLegacy(id: string): Static<typeof LegacyDoc> | null {
    const file = this.paths.credits(id);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw corruptStore(file, errorMessage(err));
    }
    if (!matches(LegacyDoc, value)) throw corruptStore(file, 'unexpected shape');
    return value;
  }

  /**
   * Opens an instance's journal for appending. With `restart` (a migration from the old file, or
   * recovery after a failed write whose bytes may or may not be on disk), the journal is first
   * rewritten as one snapshot of `state`, the state the ledger knows to be acknowledged.
   */
  async openJournal(id: string, state: CreditState, restart: boolean): Promise<Journal> {
    await ensureDir(this.paths.creditsDir);
    const file = this.journalFile(id);
    // A new journal (and a restarted one) is written whole as one snapshot line first (temp file,
    // fsync, rename): a journal on disk is then never empty, so an empty one means its contents
    // were lost (see loadSync).
    if (restart || !existsSync(file)) {
      try {
        await writeFileAtomic(file, `${snapshotLine(state)}\n`, { guard: this.guard });
      } catch (err) {
        throw storageError(err, file);
      }
      await rm(this.paths.credits(id), { force: true });
    }
    // Eager: the ledger already batches a tick's holds, debits and releases into one line.
    // O_DSYNC: nearly every line is durable (a release alone is the exception), and a debited send
    // waits for one; each write is then one trip to the disk, not two.
    const { journal } = await Journal.open(file, { eager: true, guard: this.guard, dsync: true });
    return journal;
  }

  /** Reads an instance's credits (an instance that never had credits has none). */
  async read(id: string): Promise<CreditsDoc> {
    const { state } = this.loadSync(id);
    return { balance: state.balance, spent: state.spent };
  }

  /** Reads every credit file, so a corrupt one stops start-up (naming it) instead of failing sends. */
  async verifyAll(): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.paths.creditsDir);
    } catch {
      return [];
    }
    const ids = [...new Set(names.filter((n) => !n.startsWith('.') && /\.jsonl?$/.test(n)).map((n) => n.replace(/\.jsonl?$/, '')))];
    for (const id of ids) this.loadSync(id);
    return ids;
  }

  async remove(id: string): Promise<void> {
    await rm(this.journalFile(id), { force: true });
    await rm(this.paths.credits(id), { force: true });
  }
}
