import { open, readFile, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { storageError } from '../../domain/errors.js';
import { FILE_MODE, syncDir, tempPath, type WriteGuard } from '../../fs/atomic-write.js';
import { Journal, type JournalLine } from './journal.js';

/** Where a line is in the journal file. */
export interface Loc {
  offset: number;
  length: number;
}

/** What the owner of a log (an instance's outbox, messages or credits) does when lines move. */
export interface RecordLogOwner {
  /** The journal was (re)opened: these are its lines; find each live delivery's full line again. */
  relocate(lines: readonly JournalLine[]): void;
  /**
   * A compaction: the lines that replace the journal's first `data.length` bytes, built from them
   * and the owner's state (which may be newer: the lines after those bytes are kept after the
   * snapshot and replayed on top of it, so they must be idempotent). `placed` is told where each
   * snapshot line went, and that the lines from `tailFrom` on moved by `shift` bytes.
   */
  snapshot(data: Buffer): { lines: string[]; placed(locs: Loc[], tailFrom: number, shift: number): void };
}

interface Held {
  text: string;
  durable: boolean;
  placed: ((loc: Loc) => void) | undefined;
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * The one journal abstraction of the files engine: a journal of records (journal.ts: group commit,
 * torn tail cut at open) that its owner replays into memory, plus what every owner needs around it:
 *
 * - A compaction rewrites the journal from memory while lines keep arriving: the snapshot
 *   is written to a temp file while lines still go to the journal; then, for a moment, new lines
 *   are held while the journal's tail (the lines since the snapshot) is copied after it and the
 *   temp file is renamed over the journal; the held lines follow, in order.
 * - A failed write closes the journal (store/journal.ts); the next line reopens it from disk (the
 *   owner relocates its lines), so one full disk does not stop the owner for good.
 * - Reads of a line by location are retried when a compaction or a reopen moved it meanwhile.
 */
export class RecordLog {
  private journal: Journal | null;
  /** A reopen or a compaction under way: new lines are held until it ends. */
  private busy: Promise<void> | null = null;
  private held: Held[] = [];
  private closed = false;
  /** Bumped whenever lines move (compaction, reopen): a location read before may be stale. */
  private gen = 0;

  private constructor(
    readonly file: string,
    journal: Journal,
    private readonly owner: RecordLogOwner,
    private readonly guard: WriteGuard,
  ) {
    this.journal = journal;
  }

  /** Opens the journal (creating it) and gives its lines to the owner. */
  static async open(file: string, owner: RecordLogOwner, guard: WriteGuard): Promise<{ log: RecordLog; lines: JournalLine[] }> {
    const { journal, lines } = await Journal.open(file, { guard });
    return { log: new RecordLog(file, journal, owner, guard), lines };
  }

  /** Bytes in the journal (written or queued). */
  get size(): number {
    return this.journal?.size ?? 0;
  }

  get compacting(): boolean {
    return this.compaction !== null;
  }

  /**
   * Appends a line. `placed` learns where it goes as soon as that is known (at once unless a
   * compaction is under way). A durable line resolves once it is on disk (group commit); a lazy
   * one resolves once it is handed to the journal, and may be lost in a crash.
   */
  append(text: string, durable: boolean, placed?: (loc: Loc) => void): Promise<void> {
    if (this.closed) return Promise.reject(new Error(`journal ${this.file} is closed`));
    if (this.journal && !this.busy) return this.appendNow(this.journal, text, durable, placed);
    const p = new Promise<void>((resolve, reject) => this.held.push({ text, durable, placed, resolve, reject }));
    if (!this.busy) this.run(this.reopen());
    return p;
  }

  private appendNow(journal: Journal, text: string, durable: boolean, placed: ((loc: Loc) => void) | undefined): Promise<void> {
    let offset: number;
    let done: Promise<void>;
    try {
      if (durable) {
        const appended = journal.append(text);
        offset = appended.offset;
        done = appended.durable;
        done.catch(() => this.failed(journal));
      } else {
        offset = journal.appendLazy(text);
        done = Promise.resolve();
      }
    } catch (err) {
      // Closed by an earlier failed write: reopen, and this line waits for it.
      this.failed(journal);
      return this.append(text, durable, placed);
    }
    placed?.({ offset, length: Buffer.byteLength(text, 'utf8') });
    return done;
  }

  /** A write failed: the journal refuses lines until reopened (the next line reopens it). */
  private failed(journal: Journal): void {
    if (this.journal !== journal) return;
    this.journal = null;
    void journal.close().catch(() => undefined);
  }

  /** Runs a reopen or a compaction's swap; lines held meanwhile follow it, in order. */
  private run(work: Promise<void>): void {
    this.busy = work
      .catch(() => undefined)
      .then(() => {
        this.busy = null;
        const held = this.held;
        this.held = [];
        // Through append: a journal that could not be opened is tried again (once, for all of them).
        for (const h of held) this.append(h.text, h.durable, h.placed).then(h.resolve, h.reject);
      });
  }

  private async reopen(): Promise<void> {
    if (this.closed) return;
    try {
      const { journal, lines } = await Journal.open(this.file, { guard: this.guard });
      this.gen += 1;
      this.owner.relocate(lines);
      this.journal = journal;
    } catch (err) {
      for (const h of this.held.splice(0)) h.reject(err);
      throw err;
    }
  }

  /**
   * Rewrites the journal as the owner's snapshot (see RecordLogOwner.snapshot) followed by the lines
   * written since. Appends wait only while the tail is copied and the file renamed. A failure
   * leaves the old journal (or, past the rename, the new one reopened) and is thrown.
   */
  compact(): Promise<void> {
    const journal = this.journal;
    if (this.compaction || this.busy || !journal || this.closed) return Promise.resolve();
    const work = this.compactNow(journal).finally(() => {
      this.compaction = null;
    });
    this.compaction = work;
    return work;
  }

  private compaction: Promise<void> | null = null;

  private async compactNow(journal: Journal): Promise<void> {
    const tmp = tempPath(this.file);
    let renamed = false;
    try {
      // No drain here: under steady traffic the journal is never idle. What is on disk now is
      // enough; lines still queued come after it (in the tail).
      const data = await readFile(this.file);
      // Only complete lines: one may be being written right now.
      const data0 = data.subarray(0, data.lastIndexOf(0x0a) + 1);
      const mark = data0.length;
      const snap = this.owner.snapshot(data0);
      const bufs = snap.lines.map((l) => Buffer.from(`${l}\n`, 'utf8'));
      const locs: Loc[] = [];
      let size = 0;
      for (const b of bufs) {
        locs.push({ offset: size, length: b.length - 1 });
        size += b.length;
      }
      const out = await open(tmp, 'w', FILE_MODE);
      try {
        await out.writeFile(Buffer.concat(bufs));
        await out.sync();
        if (this.journal !== journal || this.closed) return;
        // From here until the rename, lines are held (not lost: they follow the new file).
        let release!: () => void;
        this.run(new Promise<void>((r) => (release = r)));
        try {
          await journal.drain();
          if (this.journal !== journal || this.closed) return;
          const end = journal.size;
          if (end > mark) {
            // The bytes as they are (locations move by a byte count).
            const tail = Buffer.alloc(end - mark);
            const src = await open(this.file, 'r');
            try {
              const { bytesRead } = await src.read(tail, 0, tail.length, mark);
              if (bytesRead !== tail.length) throw new Error(`journal ${this.file}: ${bytesRead} of ${tail.length} bytes of its tail read`);
            } finally {
              await src.close();
            }
            await out.write(tail, 0, tail.length, size);
            await out.sync();
          }
          this.guard.assertHeld();
          await rename(tmp, this.file);
          renamed = true;
          await syncDir(dirname(this.file));
          this.journal = null;
          await journal.close().catch(() => undefined);
          const reopened = await Journal.open(this.file, { guard: this.guard });
          this.gen += 1;
          snap.placed(locs, mark, size - mark);
          this.journal = reopened.journal;
        } finally {
          release();
        }
      } finally {
        await out.close().catch(() => undefined);
      }
    } catch (err) {
      // Past the rename the lines moved but could not all be placed: the next line or read
      // reopens the journal and finds every line again.
      if (renamed) this.journal = null;
      throw storageError(err, this.file);
    } finally {
      if (!renamed) await rm(tmp, { force: true });
    }
  }

  /**
   * Reads a line written earlier; `where` gives its current location (asked again when a
   * compaction moved the line meanwhile), `parse` turns it into what the caller wants, or null
   * when it is not the line it looks for (whatever a stale location points at). Null when the
   * line is gone.
   */
  async read<T>(where: () => Loc | null, parse: (text: string) => T | null): Promise<T | null> {
    for (let tries = 0; ; tries++) {
      while (this.busy) await this.busy;
      const journal = this.journal;
      const loc = where();
      if (!loc || this.closed) return null;
      if (!journal) {
        if (tries > 5) throw new Error(`journal ${this.file} could not be opened`);
        this.run(this.reopen());
        continue;
      }
      const gen = this.gen;
      const settled = (): boolean => gen === this.gen && !this.busy;
      try {
        const value = parse(await journal.read(loc.offset, loc.length));
        if (value !== null) return value;
        if (settled() || tries > 5) return null;
      } catch (err) {
        if (settled() || tries > 5) throw err;
      }
    }
  }

  /** Waits for every line to be written, then closes the journal. */
  async close(): Promise<void> {
    await this.compaction?.catch(() => undefined);
    while (this.busy) await this.busy;
    this.closed = true;
    const journal = this.journal;
    this.journal = null;
    await journal?.close();
  }
}
