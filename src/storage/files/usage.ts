import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { errorMessage } from '../../domain/errors.js';
import { ensureDir, type WriteGuard } from '../../fs/atomic-write.js';
import { utcDate, type UsageDay, type UsageRepository } from '../ports/usage.js';
import { AtomicJsonFile } from './json-file.js';
import { isInstanceId } from './paths.js';

/** date -> [sent, debited] */
type Days = Record<string, [number, number]>;
interface UsageDoc {
  version: 1;
  days: Days;
}
const isDoc = (v: unknown): v is UsageDoc => {
  const d = v as Partial<UsageDoc> | null;
  return (
    typeof d === 'object' &&
    d !== null &&
    d.version === 1 &&
    typeof d.days === 'object' &&
    d.days !== null &&
    Object.values(d.days).every((x) => Array.isArray(x) && x.length === 2 && x.every((n) => Number.isInteger(n) && n >= 0))
  );
};

/** Counts are written this long after the first one not yet written. */
const FLUSH_MS = 1_000;

/**
 * Sends per instance and day as files: `DATA_DIR/usage/<id>.json` (0600, atomic), a few dozen days
 * each. Counts gather in memory and are written within FLUSH_MS (and at close), so a send never
 * waits for this file; a crash may lose the counts of that last second.
 */
export class UsageFiles implements UsageRepository {
  /** What is on disk (read on first use). */
  private readonly stored = new Map<string, Promise<Days>>();
  /** Counts not yet written. */
  private readonly pending = new Map<string, Days>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly dir: string,
    private readonly guard: WriteGuard,
    private readonly logger: Logger,
  ) {}

  private file(id: string): AtomicJsonFile<UsageDoc> {
    if (!isInstanceId(id)) throw new Error(`not an instance id: ${JSON.stringify(id.slice(0, 60))}`);
    return new AtomicJsonFile(join(this.dir, `${id}.json`), isDoc, this.guard);
  }

  private read(id: string): Promise<Days> {
    let p = this.stored.get(id);
    if (!p) {
      p = this.file(id)
        .read()
        .then((doc) => ({ ...(doc?.days ?? {}) }));
      p.catch(() => this.stored.delete(id));
      this.stored.set(id, p);
    }
    return p;
  }

  count(instanceId: string, at: number, debited: boolean): void {
    if (!isInstanceId(instanceId)) return;
    let days = this.pending.get(instanceId);
    if (!days) {
      days = {};
      this.pending.set(instanceId, days);
    }
    const date = utcDate(at);
    const d = (days[date] ??= [0, 0]);
    d[0] += 1;
    if (debited) d[1] += 1;
    this.timer ??= setTimeout(() => {
      this.timer = null;
      void this.flush().catch((err: unknown) => this.logger.warn({ err: errorMessage(err) }, 'could not write usage counts; retrying with the next ones'));
    }, FLUSH_MS);
    this.timer.unref();
  }

  async days(instanceId: string, from: string, to: string): Promise<UsageDay[]> {
    const stored = isInstanceId(instanceId) ? await this.read(instanceId) : {};
    const merged: Days = {};
    for (const src of [stored, this.pending.get(instanceId) ?? {}]) {
      for (const [date, [s, d]] of Object.entries(src)) {
        const m = (merged[date] ??= [0, 0]);
        m[0] += s;
        m[1] += d;
      }
    }
    return Object.entries(merged)
      .filter(([date]) => date >= from && date <= to)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([date, [sent, debited]]) => ({ date, sent, debited }));
  }

  flush(): Promise<void> {
    const run = this.flushing.then(() => this.writePending());
    this.flushing = run.catch(() => undefined);
    return run;
  }

  private async writePending(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = [...this.pending];
    this.pending.clear();
    if (batch.length === 0) return;
    let failure: unknown = null;
    for (const [id, add] of batch) {
      try {
        await ensureDir(this.dir);
        const days = await this.read(id);
        const next: Days = { ...days };
        for (const [date, [s, d]] of Object.entries(add)) {
          const was = next[date] ?? [0, 0];
          next[date] = [was[0] + s, was[1] + d];
        }
        await this.file(id).write({ version: 1, days: next });
        this.stored.set(id, Promise.resolve(next));
      } catch (err) {
        // Kept for the next write.
        const again = this.pending.get(id) ?? {};
        for (const [date, [s, d]] of Object.entries(add)) {
          const was = again[date] ?? [0, 0];
          again[date] = [was[0] + s, was[1] + d];
        }
        this.pending.set(id, again);
        failure ??= err;
      }
    }
    if (failure !== null) throw failure;
  }

  async sweep(before: string): Promise<void> {
    await this.flush();
    const names = await readdir(this.dir).catch(() => [] as string[]);
    for (const name of names) {
      const id = name.replace(/\.json$/, '');
      if (!isInstanceId(id) || name !== `${id}.json`) continue;
      const days = await this.read(id).catch(() => null);
      if (!days || !Object.keys(days).some((d) => d < before)) continue;
      const next = Object.fromEntries(Object.entries(days).filter(([d]) => d >= before));
      await this.file(id).write({ version: 1, days: next });
      this.stored.set(id, Promise.resolve(next));
    }
  }

  async removeInstance(instanceId: string): Promise<void> {
    this.pending.delete(instanceId);
    this.stored.delete(instanceId);
    if (isInstanceId(instanceId)) await rm(join(this.dir, `${instanceId}.json`), { force: true });
  }
}
