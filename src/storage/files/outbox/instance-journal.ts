import { applyPatch, stateOf, type DeliveryPatch, type DeliveryRecord, type DeliveryState } from '../../ports/outbox.js';
import type { JournalLine } from '../journal.js';
import type { Loc, RecordLog, RecordLogOwner } from '../record-log.js';
import { fullLine, parseLine } from './files.js';

/** What memory keeps of a delivery: its state, and where its full line (with the event) is. */
export interface Entry extends DeliveryState {
  /** Its latest `d` line in the journal; null while that line waits for a compaction to end. */
  at: Loc | null;
}

export function entryOf(record: DeliveryState, at: Loc | null): Entry {
  const e = stateOf(record) as Entry;
  e.at = at;
  return e;
}

function finishedTime(e: DeliveryState): number {
  const t = Date.parse(e.finishedAt ?? e.createdAt);
  return Number.isFinite(t) ? t : 0;
}

/**
 * One instance's outbox in the files engine: its journal (opened on use, closed when idle), the
 * state of every delivery it holds (pending and the bounded history), which of them are pending,
 * and the history in the order it finished (what pruning drops first). It is the journal's owner:
 * it replays lines, finds them again after a reopen, and writes the snapshot of a compaction.
 */
export class InstanceJournal implements RecordLogOwner {
  /** Every delivery in the journal, pending ones and the history. */
  readonly entries = new Map<string, Entry>();
  readonly pending = new Set<string>();
  /** Finished deliveries (the history) with their finish time, oldest finished first. */
  private readonly finished = new Map<string, number>();
  /** Highest seq stored. */
  lastSeq = 0;
  log: RecordLog | null = null;
  opening: Promise<RecordLog> | null = null;
  /** Its journal being closed (idle); opening it again waits for that. */
  closing: Promise<void> | null = null;
  /** Bytes of the full lines of `entries`: what a compaction would leave. */
  liveBytes = 0;
  /** After a failed compaction, the next one waits until the journal is this large. */
  compactAgainAt = 0;

  constructor(readonly instanceId: string) {}

  /** Finished deliveries kept. */
  get historySize(): number {
    return this.finished.size;
  }

  /** A new delivery (appended or migrated), or a whole `d` line replacing what was known of it. */
  add(record: DeliveryState, at: Loc | null): Entry {
    this.drop(record.id);
    const e = entryOf(record, null);
    this.entries.set(e.id, e);
    this.track(e);
    if (at) this.place(e, at);
    return e;
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
    this.pending.delete(id);
    this.finished.delete(id);
  }

  /** Keeps `pending`, the history and lastSeq in step with `e`'s state. */
  private track(e: Entry): void {
    this.lastSeq = Math.max(this.lastSeq, e.seq);
    if (e.status === 'pending') {
      this.pending.add(e.id);
      this.finished.delete(e.id);
    } else {
      this.pending.delete(e.id);
      // Finishing again (after a redelivery) moves it to the end: it finished last.
      if (!this.finished.has(e.id)) this.finished.set(e.id, finishedTime(e));
    }
  }

  /** Applies a new state to a known delivery; null when it is not known. */
  update(patch: DeliveryPatch): Entry | null {
    const e = this.entries.get(patch.id);
    if (!e) return null;
    applyPatch(e, patch);
    this.track(e);
    return e;
  }

  /** Sorts the history by finish time (after a replay, whose order is the journal's). */
  sortHistory(): void {
    const sorted = [...this.finished].sort((a, b) => a[1] - b[1]);
    this.finished.clear();
    for (const [id, t] of sorted) this.finished.set(id, t);
  }

  /** Drops the oldest finished deliveries until `keep` are left; returns their ids. */
  pruneHistory(keep: number): string[] {
    const ids: string[] = [];
    for (const id of this.finished.keys()) {
      if (this.finished.size - ids.length <= keep) break;
      ids.push(id);
    }
    for (const id of ids) this.drop(id);
    return ids;
  }

  /** Replays journal lines into `entries` (at load); returns how many lines were not deliveries. */
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
        this.add(line.d, { offset, length: Buffer.byteLength(text, 'utf8') });
      } else if ('s' in line) {
        this.update(line.s);
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
      lines.push(fullLine({ ...record.d, ...stateOf(e) }));
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
