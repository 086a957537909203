import { readdir, rm } from 'node:fs/promises';
import { statSync } from 'node:fs';
import { ensureDir, writeFileAtomic } from './atomic-write.js';
import { UserError } from '../domain/errors.js';
import { AtomicJsonFile } from './json-file.js';
import { withFileLock } from './lock.js';
import { storePaths, type StorePaths } from './paths.js';

/**
 * Hot plan data: one small file per instance, so a debit rewrites a few bytes whatever the number
 * of instances.
 */
export interface CreditsDoc {
  balance: number;
  /** Lifetime credits spent, for metrics and support. */
  spent: number;
}

function isCreditsDoc(v: unknown): v is CreditsDoc {
  if (typeof v !== 'object' || v === null) return false;
  const d = v as Record<string, unknown>;
  return Number.isSafeInteger(d.balance) && (d.balance as number) >= 0 && Number.isSafeInteger(d.spent);
}

const EMPTY: CreditsDoc = { balance: 0, spent: 0 };

/** The largest balance an instance may hold (far below where integers stop being exact). */
export const MAX_CREDITS = 1_000_000_000_000;

export class CreditStore {
  readonly paths: StorePaths;
  private dirReady = false;

  constructor(dataDir: string) {
    this.paths = storePaths(dataDir);
  }

  private file(id: string): AtomicJsonFile<CreditsDoc> {
    return new AtomicJsonFile(this.paths.credits(id), isCreditsDoc);
  }

  /** A lock-free read: writes are atomic renames, so this sees the old or the new file. */
  async read(id: string): Promise<CreditsDoc> {
    return (await this.file(id).read()) ?? { ...EMPTY };
  }

  /**
   * Locked read-modify-write of one instance's credits. The file is a few bytes, so it is read
   * synchronously (no thread-pool round trip): this is the per-send hot path.
   */
  async update<R>(id: string, fn: (doc: CreditsDoc) => R): Promise<{ doc: CreditsDoc; result: R }> {
    if (!this.dirReady) {
      await ensureDir(this.paths.creditsDir);
      this.dirReady = true;
    }
    const file = this.file(id);
    return withFileLock(file.file, async () => {
      const doc = file.readSync() ?? { ...EMPTY };
      const result = fn(doc);
      await writeFileAtomic(file.file, JSON.stringify(doc));
      return { doc, result };
    });
  }

  async add(id: string, amount: number): Promise<CreditsDoc> {
    return (await this.update(id, (d) => {
      if (d.balance + amount > MAX_CREDITS) {
        throw new UserError(`credits: a balance above ${MAX_CREDITS} is not supported (now ${d.balance})`, 2);
      }
      d.balance += amount;
    })).doc;
  }

  /**
   * Debits up to `amount` (never below zero) and returns how much was debited. The daemon holds
   * credits in memory before sending, so a short debit means someone edited the file by hand.
   */
  async debit(id: string, amount: number): Promise<{ doc: CreditsDoc; debited: number }> {
    const { doc, result } = await this.update(id, (d) => {
      const debited = Math.min(amount, d.balance);
      d.balance -= debited;
      d.spent += debited;
      return debited;
    });
    return { doc, debited: result };
  }

  /** Reads every credit file, so a corrupt one stops start-up (naming it) instead of failing sends. */
  async verifyAll(): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.paths.creditsDir);
    } catch {
      return 0;
    }
    const files = names.filter((n) => n.endsWith('.json') && !n.startsWith('.'));
    for (const name of files) await this.read(name.slice(0, -5));
    return files.length;
  }

  /** Which version of the file is on disk (each atomic write is a new inode). */
  identity(id: string): string | null {
    try {
      const s = statSync(this.paths.credits(id));
      return `${s.ino}:${s.mtimeMs}`;
    } catch {
      return null;
    }
  }

  async remove(id: string): Promise<void> {
    await rm(this.paths.credits(id), { force: true });
  }
}
