import { readdir, rm } from 'node:fs/promises';
import type { Logger } from 'pino';
import { errorMessage } from '../../../domain/errors.js';
import { isInstanceId } from '../../../domain/ids.js';
import type { GatewayEvent } from '../../../events/types.js';
import {
  isDeliveryId,
  patchOf,
  stateOf,
  type DeliveryListing,
  type DeliveryPatch,
  type DeliveryRecord,
  type DeliveryState,
  type DeliveryStatus,
  type OutboxStore,
  type RequeueResult,
} from '../../ports/outbox.js';
import { ensureDir, syncDir, type WriteGuard } from '../../../fs/atomic-write.js';
import { RecordLog, type Loc } from '../record-log.js';
import { fullLine, outboxPaths, parseLine, patchLine, pruneLine, readLegacyDeliveries, removeLeftovers, type OutboxPaths } from './files.js';
import { InstanceJournal } from './instance-journal.js';

export interface FileOutboxOptions {
  dataDir: string;
  /** The data dir lock, checked before each write. */
  guard: WriteGuard;
  logger: Logger;
  /** Outboxes of instances it does not know are left alone (and said so). */
  instanceExists: (id: string) => boolean;
  /** See FileOutboxStore.compactMinBytes. */
  compactMinBytes?: number;
  /** Journals kept open; past this the least recently written idle ones are closed. Default 256. */
  maxOpenJournals?: number;
}

export const DEFAULT_COMPACT_MIN_BYTES = 1_048_576;
export const DEFAULT_MAX_OPEN_JOURNALS = 256;

/** Parses a `d` line, or null when the text is not the full line of delivery `id`. */
function fullRecordOf(text: string, id: string): DeliveryRecord | null {
  const line = parseLine(text);
  return line && 'd' in line && line.d.id === id ? line.d : null;
}

const byQueueOrder = (a: DeliveryState, b: DeliveryState): number => a.seq - b.seq || a.createdAt.localeCompare(b.createdAt);
const newestFirst = (a: DeliveryState, b: DeliveryState): number => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id);

/**
 * The outbox of the files engine: per instance, one journal (`outbox/<instanceId>/outbox.jsonl`,
 * group commit: one fdatasync for every delivery stored in the same tick; see files.ts for its
 * lines), the state of its deliveries in memory (the event bodies stay on disk, bar a bounded
 * cache of the newest), compacted once it is mostly what it no longer keeps.
 */
export class FileOutboxStore implements OutboxStore {
  readonly paths: OutboxPaths;
  /**
   * A journal is compacted once it is larger than this and more than twice what it describes.
   * Default 1 MiB; tests lower it.
   */
  compactMinBytes: number;
  private readonly journals = new Map<string, InstanceJournal>();
  /**
   * Events of recently stored deliveries, so a first attempt reads nothing. Bounded in count and
   * bytes; the journal stays the truth.
   */
  private readonly fresh = new Map<string, { event: GatewayEvent; bytes: number }>();
  private freshBytes = 0;
  private static readonly FRESH_LIMIT = 2_000;
  private static readonly FRESH_BYTES = 8 * 1_048_576;
  /** Instances whose journal is open, least recently written first. */
  private readonly openJournals = new Map<string, InstanceJournal>();
  private closed = false;

  constructor(private readonly options: FileOutboxOptions) {
    this.paths = outboxPaths(options.dataDir);
    this.compactMinBytes = options.compactMinBytes ?? DEFAULT_COMPACT_MIN_BYTES;
  }

  /**
   * Loads every known instance's outbox: replays its journal (a torn tail is cut), moves delivery
   * files of the old layout into it, and removes what a crash left behind.
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
    const io = this.journalFor(instanceId);
    const legacy = await readLegacyDeliveries(this.paths, instanceId);
    const { log, lines } = await RecordLog.open(this.paths.journal(instanceId), io, this.options.guard);
    io.log = log;
    const skipped = io.replay(lines);
    if (skipped > 0) logger.warn({ instanceId, lines: skipped }, 'outbox journal lines that are not deliveries were skipped');

    // Migration from one file per delivery: into the journal (durably), only then delete the files.
    const moving = legacy.records.filter((r) => !io.entries.has(r.id));
    await Promise.all(
      moving.map((r) => {
        const e = io.add(r, null);
        return log.append(fullLine(r), true, (at) => io.place(e, at));
      }),
    );
    for (const r of legacy.records) await rm(this.paths.file(instanceId, r.id), { force: true });
    if (moving.length > 0) logger.info({ instanceId, deliveries: moving.length }, 'webhook deliveries moved from one file each into the outbox journal');
    // File times are wall-clock times, whatever clock schedules deliveries.
    await removeLeftovers(this.paths.instanceDir(instanceId), Date.now(), legacy.unreadable);
    io.sortHistory();
    if (this.compactDue(io)) await log.compact().catch((err: unknown) => logger.warn({ instanceId, error: errorMessage(err) }, 'outbox journal compaction failed'));
    if (io.pending.size > 0) {
      this.touch(io);
    } else {
      // Nothing to send: no file handle held for it until its next event.
      io.log = null;
      await log.close();
    }
  }

  async instances(): Promise<string[]> {
    return [...this.journals.keys()];
  }

  async loadPending(instanceId: string): Promise<{ deliveries: DeliveryState[]; lastSeq: number }> {
    const io = this.journals.get(instanceId);
    if (!io) return { deliveries: [], lastSeq: 0 };
    const deliveries = [...io.pending].map((id) => stateOf(io.entries.get(id)!)).sort(byQueueOrder);
    return { deliveries, lastSeq: io.lastSeq };
  }

  /**
   * Stores a new delivery; resolves once it is on disk (its line fdatasynced, together with every
   * other line of the same tick).
   */
  async append(record: DeliveryRecord): Promise<void> {
    if (this.closed) throw new Error('the webhook outbox is closed');
    const io = this.journalFor(record.instanceId);
    const e = io.add(record, null);
    const text = fullLine(record);
    this.remember(record.id, record.event, text.length);
    try {
      await this.write(io, text, true, (at) => io.place(e, at));
    } catch (err) {
      if (io.entries.get(e.id) === e) io.drop(e.id);
      this.forgetFresh(record.id);
      throw err;
    }
    this.compactIfDue(io);
  }

  /** The event, from the cache or read back from the journal; throws when its line cannot be read. */
  async readEvent(instanceId: string, deliveryId: string): Promise<GatewayEvent | null> {
    const io = this.journals.get(instanceId);
    const e = io?.entries.get(deliveryId);
    if (!io || !e) return null;
    const cached = this.fresh.get(deliveryId);
    if (cached) return cached.event;
    const log = io.log ?? (await this.openLog(io));
    const stored = await log.read(
      () => (io.entries.get(deliveryId) === e ? e.at : null),
      (text) => fullRecordOf(text, deliveryId),
    );
    if (stored) return stored.event;
    if (io.entries.get(deliveryId) !== e) return null;
    throw new Error(`the event of webhook delivery ${deliveryId} could not be read from the outbox journal`);
  }

  saveOutcome(instanceId: string, patch: DeliveryPatch, options: { durable: boolean }): Promise<void> {
    const io = this.journals.get(instanceId);
    const e = io?.update(patch);
    if (!io || !e) return Promise.resolve();
    if (e.status !== 'pending') this.forgetFresh(e.id);
    const written = this.write(io, patchLine(patchOf(e)), options.durable);
    this.compactIfDue(io);
    return written;
  }

  async list(instanceId: string, options: { status?: DeliveryStatus; limit?: number } = {}): Promise<DeliveryListing> {
    const counts = { pending: 0, delivered: 0, failed: 0 };
    const io = this.journals.get(instanceId);
    if (!io) return { counts, deliveries: [] };
    const shown: DeliveryState[] = [];
    for (const e of io.entries.values()) {
      counts[e.status] += 1;
      if (options.status === undefined || e.status === options.status) shown.push(e);
    }
    shown.sort(newestFirst);
    return { counts, deliveries: shown.slice(0, options.limit ?? shown.length).map(stateOf) };
  }

  async requeue(instanceId: string, deliveryId: string, options: { seq: number; at: string }): Promise<RequeueResult> {
    if (!isDeliveryId(deliveryId)) return { outcome: 'not-found' };
    const io = this.journals.get(instanceId);
    const e = io?.entries.get(deliveryId);
    if (!io || !e) return { outcome: 'not-found' };
    if (e.status === 'pending') return { outcome: 'already-pending', state: stateOf(e) };
    const before = patchOf(e);
    io.update({
      ...before,
      seq: options.seq,
      status: 'pending',
      attempts: 0,
      lastError: null,
      lastStatus: null,
      nextAttemptAt: options.at,
      deliveredAt: null,
      finishedAt: null,
      redeliveries: before.redeliveries + 1,
    });
    try {
      await this.write(io, patchLine(patchOf(e)), true);
    } catch (err) {
      io.update(before);
      throw err;
    }
    return { outcome: 'requeued', state: stateOf(e) };
  }

  /**
   * Once the history is 10 % (at least 10) over `keep`, forgets the oldest finished deliveries down
   * to `keep`: one lazy `x` line; the next compaction drops their lines.
   */
  pruneHistory(instanceId: string, keep: number): Promise<void> {
    const io = this.journals.get(instanceId);
    if (!io || io.historySize <= keep + Math.max(10, Math.floor(keep / 10))) return Promise.resolve();
    const ids = io.pruneHistory(keep);
    for (const id of ids) this.forgetFresh(id);
    if (ids.length === 0) return Promise.resolve();
    const written = this.write(io, pruneLine(ids), false);
    this.compactIfDue(io);
    return written;
  }

  /** The instance was deleted: close its journal and remove its folder. */
  async removeInstance(instanceId: string): Promise<void> {
    const io = this.journals.get(instanceId);
    if (io) {
      for (const id of io.entries.keys()) this.forgetFresh(id);
      this.journals.delete(instanceId);
      this.openJournals.delete(instanceId);
      const log = io.log ?? (await io.opening?.catch(() => null)) ?? null;
      io.log = null;
      await log?.close().catch(() => undefined);
      await io.closing;
    }
    await rm(this.paths.instanceDir(instanceId), { recursive: true, force: true });
  }

  /** Writes what is queued and closes every journal (shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    this.openJournals.clear();
    for (const io of this.journals.values()) {
      const log = io.log ?? (await io.opening?.catch(() => null)) ?? null;
      io.log = null;
      await io.closing;
      await log?.close().catch((err: unknown) => this.options.logger.error({ instanceId: io.instanceId, error: errorMessage(err) }, 'could not close an outbox journal'));
    }
  }

  private journalFor(instanceId: string): InstanceJournal {
    let io = this.journals.get(instanceId);
    if (!io) {
      io = new InstanceJournal(instanceId);
      this.journals.set(instanceId, io);
    }
    return io;
  }

  private touch(io: InstanceJournal): void {
    this.openJournals.delete(io.instanceId);
    this.openJournals.set(io.instanceId, io);
  }

  /**
   * Closes the least recently written journals past maxOpenJournals, of instances with nothing
   * pending (a file handle each; the next write reopens it).
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
      if (!log || io.opening || log.compacting || io.pending.size > 0) continue;
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

  /** The instance's journal, opened (and its folder created) on first use. */
  private openLog(io: InstanceJournal): Promise<RecordLog> {
    if (io.log) return Promise.resolve(io.log);
    io.opening ??= (async () => {
      // The same file is never open twice: an idle close finishes first.
      while (io.closing) await io.closing;
      if (this.journals.get(io.instanceId) !== io) throw new Error(`instance ${io.instanceId} was removed`);
      const dir = this.paths.instanceDir(io.instanceId);
      await ensureDir(dir);
      const { log, lines } = await RecordLog.open(this.paths.journal(io.instanceId), io, this.options.guard);
      io.relocate(lines);
      // A new journal: its name must survive a crash as much as its first line.
      if (log.size === 0) await Promise.all([syncDir(dir), syncDir(this.paths.root)]);
      if (this.journals.get(io.instanceId) !== io || this.closed) {
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
  private write(io: InstanceJournal, text: string, durable: boolean, placed?: (at: Loc) => void): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the webhook outbox is closed'));
    if (io.log && !io.opening) {
      this.touch(io);
      return io.log.append(text, durable, placed);
    }
    return this.openLog(io).then((log) => log.append(text, durable, placed));
  }

  private remember(id: string, event: GatewayEvent, bytes: number): void {
    this.fresh.set(id, { event, bytes });
    this.freshBytes += bytes;
    while (this.fresh.size > FileOutboxStore.FRESH_LIMIT || this.freshBytes > FileOutboxStore.FRESH_BYTES) {
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

  private compactDue(io: InstanceJournal): boolean {
    const log = io.log;
    return log !== null && !log.compacting && log.size > Math.max(this.compactMinBytes, 2 * io.liveBytes, io.compactAgainAt);
  }

  /**
   * Rewrites the journal as one line per delivery kept once it is both over compactMinBytes and
   * more than twice that: each byte is rewritten about once, whatever the traffic.
   */
  private compactIfDue(io: InstanceJournal): void {
    if (!this.compactDue(io)) return;
    const log = io.log!;
    log.compact().catch((err: unknown) => {
      // Not at every line: once the journal has grown by as much again.
      io.compactAgainAt = log.size + this.compactMinBytes;
      this.options.logger.warn({ instanceId: io.instanceId, error: errorMessage(err) }, 'outbox journal compaction failed; retried later');
    });
  }
}
