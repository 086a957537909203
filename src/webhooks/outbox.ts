import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.js';
import { errorMessage } from '../domain/errors.js';
import type { GatewayEvent } from '../events/types.js';
import { ensureDir } from '../store/atomic-write.js';
import { isInstanceId } from '../store/paths.js';
import { isDeliveryId, newDeliveryId, newDeliveryRecord, type DeliveryRecord } from './delivery-record.js';
import { InstanceQueue, type PendingDelivery } from './instance-queue.js';
import { createDelivery, outboxPaths, readDelivery, readInstanceDeliveries, writeDelivery, type OutboxPaths } from './outbox-files.js';

export interface OutboxOptions {
  dataDir: string;
  /** Past this many pending deliveries per instance the oldest are marked failed. */
  maxPendingPerInstance: number;
  /** Finished deliveries kept on disk per instance. */
  historyPerInstance: number;
  clock: Clock;
  logger: Logger;
  instanceExists: (id: string) => boolean;
}

function parseTime(iso: string | null, fallback: number): number {
  if (iso === null) return fallback;
  const t = Date.parse(iso);
  return Number.isFinite(t) ? t : fallback;
}

/** Old enough that no live process is still using it. */
const LEFTOVER_AGE_MS = 60_000;

/**
 * Removes what a process killed mid-write leaves behind: temp files of atomic writes, lock
 * directories, and the torn new deliveries `load()` found unreadable (created in place; a torn one
 * was never acknowledged). Only old ones, since the CLI may be writing right now.
 */
async function removeLeftovers(dir: string, now: number, tornIds: string[]): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const torn = new Set(tornIds.map((id) => `${id}.json`));
  for (const name of names) {
    const isTemp = name.startsWith('.') && name.endsWith('.tmp');
    if (!isTemp && !torn.has(name) && !name.endsWith('.json.lock')) continue;
    const file = join(dir, name);
    const info = await stat(file).catch(() => null);
    if (info && now - info.mtimeMs > LEFTOVER_AGE_MS) await rm(file, { recursive: true, force: true });
  }
}

/**
 * The durable outbox: one file per delivery under `outbox/<instanceId>/`, an in-memory queue of
 * their states per instance, and the bounds (pending and history) that keep both finite.
 */
export class Outbox {
  readonly paths: OutboxPaths;
  private readonly queues = new Map<string, InstanceQueue>();
  private readonly dirsReady = new Set<string>();
  /**
   * Records of recently stored pending deliveries, so the first attempt needs no file read. Bounded;
   * the file stays the truth (a CLI redelivery rewrites it and is re-read through adopt()).
   */
  private readonly fresh = new Map<string, DeliveryRecord>();
  private static readonly FRESH_LIMIT = 2_000;

  constructor(private readonly options: OutboxOptions) {
    this.paths = outboxPaths(options.dataDir);
  }

  private queueFor(instanceId: string): InstanceQueue {
    let q = this.queues.get(instanceId);
    if (!q) {
      q = new InstanceQueue(instanceId);
      this.queues.set(instanceId, q);
    }
    return q;
  }

  get(instanceId: string): InstanceQueue | undefined {
    return this.queues.get(instanceId);
  }

  all(): IterableIterator<InstanceQueue> {
    return this.queues.values();
  }

  pendingCount(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.pending.size;
    return n;
  }

  /** Loads every known instance's pending deliveries (to resume) and history (to bound it). */
  async load(): Promise<void> {
    await ensureDir(this.paths.root);
    // Nudges of the CLI before it went through the daemon: their deliveries load as pending anyway.
    await rm(this.paths.requestsDir, { recursive: true, force: true });
    const now = this.options.clock.now();
    for (const name of await readdir(this.paths.root)) {
      if (!isInstanceId(name)) continue;
      if (!this.options.instanceExists(name)) {
        this.options.logger.warn({ instanceId: name }, 'outbox of an unknown instance left alone');
        continue;
      }
      this.dirsReady.add(name);
      const q = this.queueFor(name);
      const torn: string[] = [];
      const records = await readInstanceDeliveries(this.paths, name, torn);
      // File times are wall-clock times, whatever clock schedules deliveries.
      await removeLeftovers(this.paths.instanceDir(name), Date.now(), torn);
      for (const r of records) {
        q.lastSeq = Math.max(q.lastSeq, r.seq);
        if (r.status === 'pending') q.add(this.pendingOf(r, now));
        else q.addFinished(r.id, parseTime(r.finishedAt ?? r.createdAt, 0));
      }
      q.sortHistory();
      await this.pruneHistory(q);
      await this.enforceBound(q);
      if (q.pending.size > 0) this.options.logger.info({ instanceId: name, pending: q.pending.size }, 'resuming webhook deliveries');
    }
  }

  private pendingOf(r: DeliveryRecord, now: number): PendingDelivery {
    return { id: r.id, lane: r.lane, seq: r.seq, nextAttemptAt: parseTime(r.nextAttemptAt, now), durable: true, inFlight: false, abort: null };
  }

  /**
   * Stores a new delivery; resolves once it is on disk (fsynced), so an event acknowledged
   * upstream after this is never lost. It joins its lane at once (not yet attemptable) so two
   * events of one chat keep their order even if their writes finish out of order.
   */
  async append(event: GatewayEvent): Promise<DeliveryRecord> {
    const q = this.queueFor(event.instanceId);
    const now = this.options.clock.now();
    const record = newDeliveryRecord(event, newDeliveryId(now), q.lastSeq + 1, now);
    const d = this.pendingOf(record, now);
    d.durable = false;
    q.add(d);
    try {
      if (!this.dirsReady.has(q.instanceId)) {
        await ensureDir(this.paths.instanceDir(q.instanceId));
        this.dirsReady.add(q.instanceId);
      }
      await createDelivery(this.paths.file(q.instanceId, record.id), record);
    } catch (err) {
      q.remove(d);
      throw err;
    }
    this.fresh.set(record.id, record);
    if (this.fresh.size > Outbox.FRESH_LIMIT) this.fresh.delete(this.fresh.keys().next().value as string);
    d.durable = true;
    await this.enforceBound(q);
    return record;
  }

  async read(instanceId: string, id: string): Promise<DeliveryRecord | null> {
    const cached = this.fresh.get(id);
    if (cached && cached.instanceId === instanceId) return cached;
    return readDelivery(this.paths.file(instanceId, id));
  }

  /**
   * Persists the outcome of an attempt; a finished delivery moves to the (bounded) history. A
   * finished one leaves the queue at once, before its file is rewritten: the next delivery of its
   * chat need not wait for the write (a crash before it means one more, duplicate, delivery, which
   * at-least-once allows). The returned promise settles when the file is written.
   */
  async save(q: InstanceQueue, d: PendingDelivery, record: DeliveryRecord): Promise<void> {
    this.fresh.delete(record.id);
    if (record.status !== 'pending') {
      q.remove(d);
      // Into the history only once written, so pruning never reads or deletes a half-saved one.
      await writeDelivery(this.paths.file(q.instanceId, record.id), record, false);
      q.addFinished(record.id, parseTime(record.finishedAt, this.options.clock.now()));
      await this.pruneHistory(q);
      return;
    }
    await writeDelivery(this.paths.file(q.instanceId, record.id), record, false);
    d.nextAttemptAt = parseTime(record.nextAttemptAt, this.options.clock.now());
    // The bound may have been left exceeded while this one was in flight (not droppable).
    await this.enforceBound(q);
  }

  /** Marks the oldest pending deliveries failed while the instance holds more than the limit. */
  async enforceBound(q: InstanceQueue): Promise<void> {
    const max = this.options.maxPendingPerInstance;
    while (q.pending.size > max) {
      const victim = q.oldestDroppable();
      if (!victim) return;
      q.remove(victim);
      try {
        const record = await this.read(q.instanceId, victim.id);
        if (!record) continue;
        const iso = new Date(this.options.clock.now()).toISOString();
        const failed: DeliveryRecord = {
          ...record,
          status: 'failed',
          lastError: `dropped: more than ${max} deliveries pending for this instance (webhooks.maxPendingPerInstance)`,
          nextAttemptAt: null,
          finishedAt: iso,
        };
        await writeDelivery(this.paths.file(q.instanceId, record.id), failed);
        q.addFinished(record.id, Date.parse(iso));
        this.options.logger.warn({ instanceId: q.instanceId, deliveryId: record.id, max }, 'webhook outbox full: oldest pending delivery marked failed');
      } catch (err) {
        this.options.logger.error({ err, instanceId: q.instanceId, deliveryId: victim.id }, 'could not mark a dropped delivery failed');
      }
    }
    await this.pruneHistory(q);
  }

  /**
   * Deletes the oldest finished deliveries past historyPerInstance, in batches (once the history
   * is 10 % over the limit).
   */
  private async pruneHistory(q: InstanceQueue): Promise<void> {
    const limit = this.options.historyPerInstance;
    if (q.historySize <= limit + Math.max(10, Math.floor(limit / 10))) return;
    const ids: string[] = [];
    while (q.historySize > limit) {
      const id = q.shiftFinished();
      if (id === undefined) break;
      ids.push(id);
    }
    try {
      for (const id of ids) await rm(this.paths.file(q.instanceId, id), { force: true });
    } catch (err) {
      this.options.logger.warn({ instanceId: q.instanceId, count: ids.length, error: errorMessage(err) }, 'could not prune finished deliveries');
    }
  }

  /**
   * Puts a finished (usually failed) delivery back in the queue with the same webhook-id, at the
   * back of its lane; a pending one is left as it is.
   */
  async requeue(instanceId: string, deliveryId: string): Promise<{ outcome: 'requeued' | 'already-pending'; record: DeliveryRecord } | { outcome: 'not-found' }> {
    if (!isDeliveryId(deliveryId)) return { outcome: 'not-found' };
    const record = await this.read(instanceId, deliveryId);
    if (!record || record.instanceId !== instanceId) return { outcome: 'not-found' };
    const q = this.queueFor(instanceId);
    if (record.status === 'pending' || q.pending.has(deliveryId)) return { outcome: 'already-pending', record };
    const iso = new Date(this.options.clock.now()).toISOString();
    const requeued: DeliveryRecord = {
      ...record,
      seq: q.lastSeq + 1,
      status: 'pending',
      attempts: 0,
      lastError: null,
      lastStatus: null,
      nextAttemptAt: iso,
      deliveredAt: null,
      finishedAt: null,
      redeliveries: record.redeliveries + 1,
    };
    await writeDelivery(this.paths.file(instanceId, deliveryId), requeued);
    q.forgetFinished(deliveryId);
    q.add(this.pendingOf(requeued, this.options.clock.now()));
    await this.enforceBound(q);
    return { outcome: 'requeued', record: requeued };
  }

  /** Every stored delivery of an instance, in queue order. */
  async list(instanceId: string): Promise<DeliveryRecord[]> {
    return readInstanceDeliveries(this.paths, instanceId);
  }

  /** The instance is being deleted: drop its queue and remove its files. */
  async removeInstance(instanceId: string): Promise<void> {
    this.forget(instanceId);
    await rm(this.paths.instanceDir(instanceId), { recursive: true, force: true });
  }

  /** The instance was deleted: drop its queue. */
  forget(instanceId: string): void {
    const q = this.queues.get(instanceId);
    if (!q) return;
    for (const d of q.pending.values()) d.abort?.abort();
    this.queues.delete(instanceId);
    this.dirsReady.delete(instanceId);
  }
}
