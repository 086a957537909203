import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.js';
import { errorMessage } from '../domain/errors.js';
import type { GatewayEvent } from '../events/types.js';
import { ensureDir, syncDir, type WriteGuard } from '../fs/atomic-write.js';
import type { JournalLine } from '../storage/files/journal.js';
import { isInstanceId } from '../domain/ids.js';
import {
  applyPatch,
  isDeliveryId,
  newDeliveryId,
  newDeliveryRecord,
  patchOf,
  stateOf,
  type DeliveryPatch,
  type DeliveryRecord,
  type DeliveryState,
} from './delivery-record.js';
import { InstanceQueue, type PendingDelivery } from './instance-queue.js';
import { fullLine, outboxPaths, parseLine, patchLine, pruneLine, readLegacyDeliveries, type OutboxPaths } from './outbox-files.js';
import { RecordLog, type Loc, type RecordLogOwner } from '../storage/files/record-log.js';

export interface OutboxOptions {
  dataDir: string;
  /** The data dir lock, checked before each write. */
  guard: WriteGuard;
  /** Past this many pending deliveries per instance the oldest are marked failed. */
  maxPendingPerInstance: number;
  /** Finished deliveries kept per instance. */
  historyPerInstance: number;
  clock: Clock;
  logger: Logger;
  instanceExists: (id: string) => boolean;
  /**
   * A journal is compacted once it is larger than this and more than twice what it describes.
   * Default 1 MiB; tests lower it.
   */
  compactMinBytes?: number;
  /** Journals kept open; past this the least recently written idle ones are closed. Default 256. */
  maxOpenJournals?: number;
}

export const DEFAULT_COMPACT_MIN_BYTES = 1_048_576;
export const DEFAULT_MAX_OPEN_JOURNALS = 256;

function parseTime(iso: string | null, fallback: number): number {
  if (iso === null) return fallback;
  const t = Date.parse(iso);
  return Number.isFinite(t) ? t : fallback;
}

/** Old enough that no live process is still using it. */
const LEFTOVER_AGE_MS = 60_000;

/**
 * Removes what a process killed mid-write leaves behind: temp files of atomic writes (a journal
 * compaction's), lock directories of older versions, and the torn one-file deliveries of the old
 * layout that `load()` found unreadable (created in place; a torn one was never acknowledged). Only
 * old ones, as before the journal, when the CLI could be writing right now.
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

/** What memory keeps of a delivery: its state, and where its full line (with the event) is. */
interface Entry extends DeliveryState {
  /** Its latest `d` line in the journal; null while that line waits for a compaction to end. */
  at: Loc | null;
}

function entryOf(record: DeliveryRecord, at: Loc | null): Entry {
  const e = stateOf(record) as Entry;
  e.at = at;
  return e;
}

function withEvent(e: Entry, event: GatewayEvent): DeliveryRecord {
  const r = stateOf(e) as DeliveryRecord;
  r.event = event;
  return r;
}

/** Parses a `d` line, or null when the text is not the full line of delivery `id`. */
function fullRecordOf(text: string, id: string): DeliveryRecord | null {
  const line = parseLine(text);
  return line && 'd' in line && line.d.id === id ? line.d : null;
}

/** One instance: its journal, its deliveries (pending and history) and its queue. */
class InstanceOutbox implements RecordLogOwner {
  readonly queue: InstanceQueue;
  /** Every delivery in the journal: pending ones and the (bounded) history. */
  readonly entries = new Map<string, Entry>();
  log: RecordLog | null = null;
  opening: Promise<RecordLog> | null = null;
  /** Its journal being closed (idle); opening it again waits for that. */
  closing: Promise<void> | null = null;
  /** Bytes of the full lines of `entries`: what a compaction would leave. */
  liveBytes = 0;
  /** After a failed compaction, the next one waits until the journal is this large. */
  compactAgainAt = 0;

  constructor(readonly instanceId: string) {
    this.queue = new InstanceQueue(instanceId);
  }

  place(e: Entry, at: Loc): void {
    if (this.entries.get(e.id) !== e) return;
    this.liveBytes += at.length - (e.at?.length ?? 0);
    e.at = at;
  }

  drop(id: string): void {
    const e = this.entries.get(id);
    if (!e) return;
    this.entries.delete(id);
    this.liveBytes -= e.at?.length ?? 0;
  }

  /** Replays journal lines into `entries` (at load). */
  replay(lines: readonly JournalLine[]): number {
    let skipped = 0;
    for (const { offset, text } of lines) {
      const line = parseLine(text);
      if (!line) {
        skipped += 1;
        continue;
      }
      if ('d' in line) {
        if (line.d.instanceId !== this.instanceId) continue;
        this.drop(line.d.id);
        const e = entryOf(line.d, null);
        this.entries.set(e.id, e);
        this.place(e, { offset, length: Buffer.byteLength(text, 'utf8') });
      } else if ('s' in line) {
        const e = this.entries.get(line.s.id);
        if (e) applyPatch(e, line.s);
      } else {
        for (const id of line.x) this.drop(id);
      }
    }
    return skipped;
  }

  relocate(lines: readonly JournalLine[]): void {
    for (const { offset, text } of lines) {
      if (!text.startsWith('{"d":')) continue;
      const line = parseLine(text);
      if (!line || !('d' in line)) continue;
      const e = this.entries.get(line.d.id);
      if (e) this.place(e, { offset, length: Buffer.byteLength(text, 'utf8') });
    }
  }

  snapshot(data: Buffer): { lines: string[]; placed(locs: Loc[], tailFrom: number, shift: number): void } {
    const kept: Entry[] = [];
    const lines: string[] = [];
    for (const e of this.entries.values()) {
      // A delivery whose line comes after `data` is kept by the tail that follows the snapshot.
      if (!e.at || e.at.offset + e.at.length >= data.length) continue;
      const record = JSON.parse(data.subarray(e.at.offset, e.at.offset + e.at.length).toString('utf8')) as { d?: DeliveryRecord };
      if (record.d?.id !== e.id) throw new Error(`outbox journal of ${this.instanceId}: the line of ${e.id} is not where it should be`);
      kept.push(e);
      lines.push(fullLine({ ...record.d, ...patchOf(e) }));
    }
    return {
      lines,
      placed: (locs, tailFrom, shift) => {
        const snapshotted = new Set(kept);
        for (const e of this.entries.values()) if (e.at && !snapshotted.has(e) && e.at.offset >= tailFrom) e.at = { offset: e.at.offset + shift, length: e.at.length };
        kept.forEach((e, i) => (e.at = locs[i]!));
        let live = 0;
        for (const e of this.entries.values()) live += e.at?.length ?? 0;
        this.liveBytes = live;
      },
    };
  }
}

/**
 * The durable outbox: per instance, one journal (`outbox/<instanceId>/outbox.jsonl`, group
 * commit: one fdatasync for every delivery stored in the same tick), the state of its deliveries
 * in memory (the event bodies stay on disk, bar a bounded cache of the newest), and the bounds
 * (pending and history) that keep both finite.
 */
export class Outbox {
  readonly paths: OutboxPaths;
  private readonly instances = new Map<string, InstanceOutbox>();
  /**
   * Events of recently stored deliveries, so the first attempt reads nothing. Bounded in count
   * and bytes; the journal stays the truth.
   */
  private readonly fresh = new Map<string, { event: GatewayEvent; bytes: number }>();
  private freshBytes = 0;
  private static readonly FRESH_LIMIT = 2_000;
  private static readonly FRESH_BYTES = 8 * 1_048_576;
  private readonly compactMinBytes: number;
  /** Instances whose journal is open, least recently written first. */
  private readonly openJournals = new Map<string, InstanceOutbox>();
  private closed = false;

  constructor(private readonly options: OutboxOptions) {
    this.paths = outboxPaths(options.dataDir);
    this.compactMinBytes = options.compactMinBytes ?? DEFAULT_COMPACT_MIN_BYTES;
  }

  private touch(io: InstanceOutbox): void {
    this.openJournals.delete(io.instanceId);
    this.openJournals.set(io.instanceId, io);
  }

  /**
   * Closes the least recently written journals past maxOpenJournals, of instances with nothing
   * pending (a file handle each; the next event reopens it).
   */
  private closeIdleJournals(): void {
    const max = this.options.maxOpenJournals ?? DEFAULT_MAX_OPEN_JOURNALS;
    for (const [id, io] of this.openJournals) {
      if (this.openJournals.size <= max) return;
      const log = io.log;
      if (!log && !io.opening) {
        this.openJournals.delete(id); // closed meanwhile
        continue;
      }
      if (!log || io.opening || log.compacting || io.queue.pending.size > 0) continue;
      this.openJournals.delete(id);
      io.log = null;
      io.closing = log
        .close()
        .catch((err: unknown) => this.options.logger.warn({ instanceId: id, error: errorMessage(err) }, 'could not close an idle outbox journal'))
        .finally(() => {
          io.closing = null;
        });
    }
  }

  private instanceFor(instanceId: string): InstanceOutbox {
    let io = this.instances.get(instanceId);
    if (!io) {
      io = new InstanceOutbox(instanceId);
      this.instances.set(instanceId, io);
    }
    return io;
  }

  get(instanceId: string): InstanceQueue | undefined {
    return this.instances.get(instanceId)?.queue;
  }

  *all(): IterableIterator<InstanceQueue> {
    for (const io of this.instances.values()) yield io.queue;
  }

  pendingCount(): number {
    let n = 0;
    for (const io of this.instances.values()) n += io.queue.pending.size;
    return n;
  }

  /**
   * Loads every known instance's outbox: replays its journal (a torn tail is cut), moves delivery
   * files of the old layout into it, and queues what is pending to resume.
   */
  async load(): Promise<void> {
    await ensureDir(this.paths.root);
    // Nudges of the CLI before it went through the daemon: their deliveries load as pending anyway.
    await rm(this.paths.requestsDir, { recursive: true, force: true });
    for (const name of await readdir(this.paths.root)) {
      if (!isInstanceId(name)) continue;
      if (!this.options.instanceExists(name)) {
        this.options.logger.warn({ instanceId: name }, 'outbox of an unknown instance left alone');
        continue;
      }
      await this.loadInstance(name);
    }
  }

  private async loadInstance(instanceId: string): Promise<void> {
    const { logger } = this.options;
    const now = this.options.clock.now();
    const io = this.instanceFor(instanceId);
    const legacy = await readLegacyDeliveries(this.paths, instanceId);
    const { log, lines } = await RecordLog.open(this.paths.journal(instanceId), io, this.options.guard);
    io.log = log;
    const skipped = io.replay(lines);
    if (skipped > 0) logger.warn({ instanceId, lines: skipped }, 'outbox journal lines that are not deliveries were skipped');

    // Migration from one file per delivery: into the journal (durably), only then delete the files.
    const moving = legacy.records.filter((r) => !io.entries.has(r.id));
    await Promise.all(
      moving.map((r) => {
        const e = entryOf(r, null);
        io.entries.set(e.id, e);
        return log.append(fullLine(r), true, (at) => io.place(e, at));
      }),
    );
    for (const r of legacy.records) await rm(this.paths.file(instanceId, r.id), { force: true });
    if (moving.length > 0) logger.info({ instanceId, deliveries: moving.length }, 'webhook deliveries moved from one file each into the outbox journal');
    // File times are wall-clock times, whatever clock schedules deliveries.
    await removeLeftovers(this.paths.instanceDir(instanceId), Date.now(), legacy.unreadable);

    const q = io.queue;
    for (const e of [...io.entries.values()].sort((a, b) => a.seq - b.seq || a.createdAt.localeCompare(b.createdAt))) {
      q.lastSeq = Math.max(q.lastSeq, e.seq);
      if (e.status === 'pending') q.add(this.pendingOf(e, now));
      else q.addFinished(e.id, parseTime(e.finishedAt ?? e.createdAt, 0));
    }
    q.sortHistory();
    this.pruneHistory(io);
    this.enforceBound(io);
    if (this.compactDue(io)) await log.compact().catch((err: unknown) => logger.warn({ instanceId, error: errorMessage(err) }, 'outbox journal compaction failed'));
    if (q.pending.size > 0) {
      logger.info({ instanceId, pending: q.pending.size }, 'resuming webhook deliveries');
      this.touch(io);
    } else {
      // Nothing to send: no file handle held for it until its next event.
      io.log = null;
      this.openJournals.delete(instanceId);
      await log.close();
    }
  }

  private pendingOf(e: DeliveryState, now: number): PendingDelivery {
    return { id: e.id, lane: e.lane, seq: e.seq, nextAttemptAt: parseTime(e.nextAttemptAt, now), durable: true, inFlight: false, abort: null };
  }

  /** The instance's journal, opened (and its folder created) on first use. */
  private openLog(io: InstanceOutbox): Promise<RecordLog> {
    if (io.log) return Promise.resolve(io.log);
    io.opening ??= (async () => {
      // The same file is never open twice: an idle close finishes first.
      while (io.closing) await io.closing;
      if (this.instances.get(io.instanceId) !== io) throw new Error(`instance ${io.instanceId} was removed`);
      const dir = this.paths.instanceDir(io.instanceId);
      await ensureDir(dir);
      const { log, lines } = await RecordLog.open(this.paths.journal(io.instanceId), io, this.options.guard);
      io.relocate(lines);
      // A new journal: its name must survive a crash as much as its first line.
      if (log.size === 0) await Promise.all([syncDir(dir), syncDir(this.paths.root)]);
      if (this.instances.get(io.instanceId) !== io) {
        await log.close();
        throw new Error(`instance ${io.instanceId} was removed`);
      }
      io.log = log;
      this.touch(io);
      this.closeIdleJournals();
      return log;
    })().finally(() => {
      io.opening = null;
    });
    return io.opening;
  }

  /** Writes a journal line of `io`; durable lines resolve once on disk, lazy ones once queued. */
  private write(io: InstanceOutbox, text: string, durable: boolean, placed?: (at: Loc) => void): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the webhook outbox is closed'));
    if (io.log && !io.opening) {
      this.touch(io);
      return io.log.append(text, durable, placed);
    }
    return this.openLog(io).then((log) => log.append(text, durable, placed));
  }

  /** A line whose loss in a crash costs at most one more attempt: nobody waits for it. */
  private writeLazy(io: InstanceOutbox, text: string): void {
    this.write(io, text, false).catch((err: unknown) => {
      this.options.logger.warn({ instanceId: io.instanceId, error: errorMessage(err) }, 'could not record a webhook delivery change');
    });
  }

  private remember(id: string, event: GatewayEvent, bytes: number): void {
    this.fresh.set(id, { event, bytes });
    this.freshBytes += bytes;
    while (this.fresh.size > Outbox.FRESH_LIMIT || this.freshBytes > Outbox.FRESH_BYTES) {
      const [oldest, v] = this.fresh.entries().next().value as [string, { bytes: number }];
      this.fresh.delete(oldest);
      this.freshBytes -= v.bytes;
    }
  }

  private forgetFresh(id: string): void {
    const v = this.fresh.get(id);
    if (!v) return;
    this.fresh.delete(id);
    this.freshBytes -= v.bytes;
  }

  /**
   * Stores a new delivery; resolves once it is on disk (its line fdatasynced, together with every
   * other line of the same tick), so an event acknowledged upstream after this is never lost. It
   * joins its lane at once (not yet attemptable) so two events of one chat keep their order.
   */
  async append(event: GatewayEvent): Promise<DeliveryRecord> {
    const io = this.instanceFor(event.instanceId);
    const q = io.queue;
    const now = this.options.clock.now();
    const record = newDeliveryRecord(event, newDeliveryId(now), q.lastSeq + 1, now);
    const d = this.pendingOf(record, now);
    d.durable = false;
    q.add(d);
    const e = entryOf(record, null);
    io.entries.set(e.id, e);
    const text = fullLine(record);
    this.remember(record.id, event, text.length);
    try {
      await this.write(io, text, true, (at) => io.place(e, at));
    } catch (err) {
      q.remove(d);
      if (io.entries.get(e.id) === e) io.drop(e.id);
      this.forgetFresh(record.id);
      throw err;
    }
    d.durable = true;
    this.enforceBound(io);
    this.compactIfDue(io);
    return record;
  }

  /**
   * A delivery with its event (read from the journal unless cached), or null when it is gone;
   * throws when its line cannot be read.
   */
  async read(instanceId: string, id: string): Promise<DeliveryRecord | null> {
    const io = this.instances.get(instanceId);
    const e = io?.entries.get(id);
    if (!io || !e) return null;
    const cached = this.fresh.get(id);
    if (cached) return withEvent(e, cached.event);
    const log = io.log ?? (await this.openLog(io));
    const stored = await log.read(
      () => (io.entries.get(id) === e ? e.at : null),
      (text) => fullRecordOf(text, id),
    );
    if (stored) return withEvent(e, stored.event);
    if (io.entries.get(id) !== e) return null;
    throw new Error(`the event of webhook delivery ${id} could not be read from the outbox journal`);
  }

  /**
   * Records the outcome of an attempt. A finished delivery leaves the queue at once: the next
   * delivery of its chat need not wait for the disk. Its line is durable (group commit) but not
   * waited for: a crash before it reaches the disk means one more, duplicate, delivery, which
   * at-least-once allows. A retry's schedule is a lazy line (lost in a crash: attempted sooner).
   * The returned promise settles when the line is written.
   */
  save(q: InstanceQueue, d: PendingDelivery, record: DeliveryRecord): Promise<void> {
    const io = this.instances.get(q.instanceId);
    const e = io?.entries.get(d.id);
    if (!io || io.queue !== q || !e) {
      q.remove(d);
      return Promise.resolve();
    }
    applyPatch(e, patchOf(record));
    const text = patchLine(patchOf(e));
    const now = this.options.clock.now();
    if (e.status !== 'pending') {
      q.remove(d);
      this.forgetFresh(d.id);
      q.addFinished(d.id, parseTime(e.finishedAt, now));
      const written = this.write(io, text, true);
      this.pruneHistory(io);
      this.compactIfDue(io);
      return written;
    }
    d.nextAttemptAt = parseTime(e.nextAttemptAt, now);
    const written = this.write(io, text, false);
    // The bound may have been left exceeded while this one was in flight (not droppable).
    this.enforceBound(io);
    this.compactIfDue(io);
    return written;
  }

  /** Marks the oldest pending deliveries failed while the instance holds more than the limit. */
  private enforceBound(io: InstanceOutbox): void {
    const max = this.options.maxPendingPerInstance;
    const q = io.queue;
    while (q.pending.size > max) {
      const victim = q.oldestDroppable();
      if (!victim) break;
      q.remove(victim);
      const e = io.entries.get(victim.id);
      if (!e) continue;
      const iso = new Date(this.options.clock.now()).toISOString();
      Object.assign(e, {
        status: 'failed',
        lastError: `dropped: more than ${max} deliveries pending for this instance (webhooks.maxPendingPerInstance)`,
        nextAttemptAt: null,
        finishedAt: iso,
      } satisfies Partial<DeliveryPatch>);
      this.writeLazy(io, patchLine(patchOf(e)));
      this.forgetFresh(e.id);
      q.addFinished(e.id, Date.parse(iso));
      this.options.logger.warn({ instanceId: q.instanceId, deliveryId: e.id, max }, 'webhook outbox full: oldest pending delivery marked failed');
    }
    this.pruneHistory(io);
  }

  /**
   * Forgets the oldest finished deliveries past historyPerInstance, in batches (once the history
   * is 10 % over the limit, at least 10): one `x` line; the next compaction drops their lines.
   */
  private pruneHistory(io: InstanceOutbox): void {
    const limit = this.options.historyPerInstance;
    const q = io.queue;
    if (q.historySize <= limit + Math.max(10, Math.floor(limit / 10))) return;
    const ids: string[] = [];
    while (q.historySize > limit) {
      const id = q.shiftFinished();
      if (id === undefined) break;
      ids.push(id);
      io.drop(id);
      this.forgetFresh(id);
    }
    if (ids.length > 0) this.writeLazy(io, pruneLine(ids));
  }

  private compactDue(io: InstanceOutbox): boolean {
    const log = io.log;
    return log !== null && !log.compacting && log.size > Math.max(this.compactMinBytes, 2 * io.liveBytes, io.compactAgainAt);
  }

  /**
   * Rewrites the journal as one line per delivery kept once it is both over compactMinBytes and
   * more than twice that: each byte is rewritten about once, whatever the traffic.
   */
  private compactIfDue(io: InstanceOutbox): void {
    if (!this.compactDue(io)) return;
    const log = io.log!;
    log.compact().catch((err: unknown) => {
      // Not at every line: once the journal has grown by as much again.
      io.compactAgainAt = log.size + this.compactMinBytes;
      this.options.logger.warn({ instanceId: io.instanceId, error: errorMessage(err) }, 'outbox journal compaction failed; retried later');
    });
  }

  /**
   * Puts a finished (usually failed) delivery back in the queue with the same webhook-id, at the
   * back of its lane; a pending one is left as it is.
   */
  async requeue(instanceId: string, deliveryId: string): Promise<{ outcome: 'requeued' | 'already-pending'; record: DeliveryState } | { outcome: 'not-found' }> {
    if (!isDeliveryId(deliveryId)) return { outcome: 'not-found' };
    const io = this.instances.get(instanceId);
    const e = io?.entries.get(deliveryId);
    if (!io || !e) return { outcome: 'not-found' };
    const q = io.queue;
    if (e.status === 'pending' || q.pending.has(deliveryId)) return { outcome: 'already-pending', record: stateOf(e) };
    const before = patchOf(e);
    const now = this.options.clock.now();
    const iso = new Date(now).toISOString();
    applyPatch(e, {
      ...before,
      seq: q.lastSeq + 1,
      status: 'pending',
      attempts: 0,
      lastError: null,
      lastStatus: null,
      nextAttemptAt: iso,
      deliveredAt: null,
      finishedAt: null,
      redeliveries: before.redeliveries + 1,
    });
    q.forgetFinished(deliveryId);
    const d = this.pendingOf(e, now);
    d.durable = false;
    q.add(d);
    try {
      await this.write(io, patchLine(patchOf(e)), true);
    } catch (err) {
      q.remove(d);
      applyPatch(e, before);
      q.addFinished(deliveryId, parseTime(before.finishedAt, now));
      throw err;
    }
    d.durable = true;
    this.enforceBound(io);
    return { outcome: 'requeued', record: stateOf(e) };
  }

  /** Every delivery of an instance (pending and history), in queue order. */
  list(instanceId: string): DeliveryState[] {
    const io = this.instances.get(instanceId);
    if (!io) return [];
    return [...io.entries.values()].map(stateOf).sort((a, b) => a.seq - b.seq);
  }

  /** The instance is being deleted: drop its queue, close its journal and remove its files. */
  async removeInstance(instanceId: string): Promise<void> {
    await this.forget(instanceId);
    await rm(this.paths.instanceDir(instanceId), { recursive: true, force: true });
  }

  /** The instance was deleted: drop its queue, abort its attempts, close its journal. */
  async forget(instanceId: string): Promise<void> {
    const io = this.instances.get(instanceId);
    if (!io) return;
    for (const d of io.queue.pending.values()) d.abort?.abort();
    for (const id of io.entries.keys()) this.forgetFresh(id);
    this.instances.delete(instanceId);
    this.openJournals.delete(instanceId);
    const log = io.log ?? (await io.opening?.catch(() => null)) ?? null;
    io.log = null;
    await log?.close().catch(() => undefined);
    await io.closing;
  }

  /** Writes what is queued and closes every journal (shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    this.openJournals.clear();
    for (const io of this.instances.values()) {
      const log = io.log;
      io.log = null;
      await io.closing;
      await log?.close().catch((err: unknown) => this.options.logger.error({ instanceId: io.instanceId, error: errorMessage(err) }, 'could not close an outbox journal'));
    }
  }
}
