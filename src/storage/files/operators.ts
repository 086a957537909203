import type { WriteGuard } from '../../fs/write-guard.js';
import type { OperatorRecord, OperatorRepository } from '../ports/operators.js';
import { AtomicJsonFile } from './json-file.js';

interface OperatorsDoc {
  version: 1;
  operators: OperatorRecord[];
}

const isRecord = (v: unknown): v is OperatorRecord => {
  const o = v as Partial<OperatorRecord> | null;
  return (
    typeof o === 'object' &&
    o !== null &&
    typeof o.name === 'string' &&
    (o.role === 'admin' || o.role === 'agent') &&
    Array.isArray(o.instances) &&
    o.instances.every((i) => typeof i === 'string') &&
    typeof o.passwordHash === 'string' &&
    typeof o.createdAt === 'string' &&
    typeof o.passwordChangedAt === 'string'
  );
};
const isDoc = (v: unknown): v is OperatorsDoc => {
  const d = v as Partial<OperatorsDoc> | null;
  return typeof d === 'object' && d !== null && d.version === 1 && Array.isArray(d.operators) && d.operators.every(isRecord);
};

const copy = (r: OperatorRecord): OperatorRecord => ({ ...r, instances: [...r.instances] });

/**
 * Operators in `DATA_DIR/operators.json` (0600, written atomically): a handful of accounts, kept in
 * memory, the whole file rewritten on each change. Read when the engine opens; a corrupt file
 * stops start-up naming it (never overwritten).
 */
export class OperatorFiles implements OperatorRepository {
  private readonly file: AtomicJsonFile<OperatorsDoc>;
  private operators = new Map<string, OperatorRecord>();
  /** Writes one after the other: each writes the whole set as it is then. */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(path: string, guard: WriteGuard) {
    this.file = new AtomicJsonFile(path, isDoc, guard);
  }

  async load(): Promise<void> {
    const doc = await this.file.read();
    this.operators = new Map((doc?.operators ?? []).map((r) => [r.name, r]));
  }

  private save(next: Map<string, OperatorRecord>): Promise<void> {
    const run = this.chain.then(() => this.file.write({ version: 1, operators: [...next.values()] }));
    this.chain = run.catch(() => undefined);
    return run;
  }

  async list(): Promise<OperatorRecord[]> {
    return [...this.operators.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map(copy);
  }

  async get(name: string): Promise<OperatorRecord | null> {
    const r = this.operators.get(name);
    return r ? copy(r) : null;
  }

  async create(record: OperatorRecord): Promise<boolean> {
    if (this.operators.has(record.name)) return false;
    const mine = copy(record);
    const next = new Map(this.operators).set(record.name, mine);
    // Taken at once, so a second create of the same name while this one is written is refused.
    this.operators = next;
    try {
      await this.save(next);
    } catch (err) {
      if (this.operators.get(record.name) === mine) {
        this.operators = new Map(this.operators);
        this.operators.delete(record.name);
      }
      throw err;
    }
    return true;
  }

  async setPassword(name: string, passwordHash: string, at: string): Promise<OperatorRecord | null> {
    const old = this.operators.get(name);
    if (!old) return null;
    const updated = { ...copy(old), passwordHash, passwordChangedAt: at };
    const next = new Map(this.operators).set(name, updated);
    await this.save(next);
    this.operators = next;
    return copy(updated);
  }

  async remove(name: string): Promise<boolean> {
    if (!this.operators.has(name)) return false;
    const next = new Map(this.operators);
    next.delete(name);
    await this.save(next);
    this.operators = next;
    return true;
  }
}
