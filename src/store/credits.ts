import { readdir, rm } from 'node:fs/promises';
import Type, { type Static } from 'typebox';
import { closed } from '../schemas/common.js';
import { ensureDir, writeFileAtomic } from './atomic-write.js';
import { AtomicJsonFile } from './json-file.js';
import { storePaths, type StorePaths } from './paths.js';
import { matches } from '../schemas/check.js';

/** The largest balance an instance may hold (far below where integers stop being exact). */
export const MAX_CREDITS = 1_000_000_000_000;

/**
 * Hot plan data: one small file per instance (`credits/<id>.json`), so a write costs a few bytes
 * whatever the number of instances. `balance` counts every credit not yet spent, including the ones
 * `held` by sends in flight: a hold is stored before its message leaves and becomes a debit
 * (balance - 1, spent + 1) once the message was sent; a hold found at start-up belonged to a send
 * whose outcome a crash hid, and is released (the customer is never charged for it).
 */
export const CreditsDocSchema = closed({
  balance: Type.Integer({ minimum: 0, maximum: MAX_CREDITS }),
  /** Lifetime credits spent, for metrics and support. */
  spent: Type.Integer({ minimum: 0 }),
  /** Holds of sends in flight: hold id -> credits held (1). */
  held: Type.Optional(Type.Record(Type.String(), Type.Integer({ minimum: 1 }))),
});
export type CreditsDoc = Static<typeof CreditsDocSchema>;

const isCreditsDoc = (v: unknown): v is CreditsDoc => matches(CreditsDocSchema, v);

export class CreditStore {
  readonly paths: StorePaths;
  private dirReady = false;

  constructor(dataDir: string) {
    this.paths = storePaths(dataDir);
  }

  private file(id: string): AtomicJsonFile<CreditsDoc> {
    return new AtomicJsonFile(this.paths.credits(id), isCreditsDoc);
  }

  /** The stored document (an instance that never had credits has an empty one). */
  async read(id: string): Promise<CreditsDoc> {
    return (await this.file(id).read()) ?? { balance: 0, spent: 0 };
  }

  /** Same, synchronously: the file is a few bytes (the per-send hot path reads it once per instance). */
  readSync(id: string): CreditsDoc {
    return this.file(id).readSync() ?? { balance: 0, spent: 0 };
  }

  /** Replaces the document; durable unless `durable` is false. Only the daemon's ledger writes. */
  async write(id: string, doc: CreditsDoc, durable = true): Promise<void> {
    if (!this.dirReady) {
      await ensureDir(this.paths.creditsDir);
      this.dirReady = true;
    }
    await writeFileAtomic(this.paths.credits(id), JSON.stringify(doc), { durable });
  }

  /** Reads every credit file, so a corrupt one stops start-up (naming it) instead of failing sends. */
  async verifyAll(): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.paths.creditsDir);
    } catch {
      return [];
    }
    const ids = names.filter((n) => n.endsWith('.json') && !n.startsWith('.')).map((n) => n.slice(0, -5));
    for (const id of ids) await this.read(id);
    return ids;
  }

  async remove(id: string): Promise<void> {
    await rm(this.paths.credits(id), { force: true });
  }
}
