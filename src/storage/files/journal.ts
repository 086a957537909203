import { constants } from 'node:fs';
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { storageError } from '../../domain/errors.js';
import { FILE_MODE, syncDir, tempPath, type WriteGuard } from '../../fs/atomic-write.js';

/**
 * An append-only file of JSON lines with group commit: every line appended while a write is under
 * way goes out in the next write, and one fdatasync covers all of them. `append` resolves once its
 * line is on disk; `appendLazy` does not wait for the disk (a crash may lose it; the order of lines
 * is kept either way). Opening replays the lines and cuts off a torn tail (a crash mid-write):
 * nothing after the last complete line was ever acknowledged.
 *
 * One process writes a journal (the data dir lock holder), so positions are kept in memory.
 */
export interface JournalLine {
  offset: number;
  text: string;
}

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

/** The longest a lazy line waits for company (see Journal.open's `lazyDelayMs`). */
export const MAX_LAZY_DELAY_MS = 10;

export class Journal {
  /** Lines waiting for the next write, without their newlines. */
  private queued: string[] = [];
  /** Bytes known to be in the file (the end of the last successful write). */
  private written: number;
  private queuedDurable: Waiter[] = [];
  private writing: Promise<void> | null = null;
  private closed = false;
  /** See `open`'s `eager`. */
  private eager = false;
  /** See `open`'s `lazyDelayMs`. */
  private lazyDelayMs = 0;
  /** See `open`'s `dsync`: the flags the file is opened (and reopened after a rewrite) with. */
  private flags: string | number = 'a+';
  /** See `open`'s `adaptive`. */
  private adaptive = false;
  /** Of the recent writes, the share that had someone waiting (a moving average over ~8 writes). */
  private waitedShare = 0;
  /** Ends the wait for more lazy lines early (a durable line, a read, a drain). */
  private wake: (() => void) | null = null;
  /** Writes made so far (one per batch of lines): how well lines are coalesced, for tests. */
  writes = 0;

  private constructor(
    readonly file: string,
    private handle: FileHandle,
    private readonly guard: WriteGuard,
    /** Bytes written or queued: the offset of the next line. */
    private end: number,
  ) {
    this.written = end;
  }

  /**
   * Opens (creating) the journal and returns it with its complete lines. A torn last line is cut
   * off; a line in the middle that does not parse is left to the caller (it sees the text).
   * `eager`: the owner already gathers the lines of a tick into one append (the credit ledger), so
   * a write starts at once instead of one more turn of the event loop later (under load a turn is
   * a whole round of requests, and a send waits for two credit writes).
   * `lazyDelayMs` (at most 10): while only lazy lines are queued, the write waits up to this long
   * for more to join it. Nobody waits for a lazy line, so a premium send (nothing to debit, so no
   * durable write to ride along with) would otherwise cost a write of its own at every turn of the
   * loop; a durable line, a read or a drain ends the wait at once. A crash may lose lazy lines
   * either way; this widens that window by at most `lazyDelayMs`.
   * `dsync`: the file is opened with O_DSYNC, so each write returns once it is on disk: one trip
   * to the thread pool instead of two (write, then fdatasync), and the waiters of a batch are woken
   * one turn of a busy event loop sooner. Every line is then durable, lazy ones too: for journals
   * whose lines are nearly all durable (the credit ledger's). Debited sends, five paired runs of
   * the two builds in turn (`BENCH_ONLY=debited`, BENCH_GATEWAY_BIN): faster in each pair, by 1.17
   * (median; 1.01 to 1.76) on a noisy 2-core machine. One handle, not a second O_DSYNC one beside
   * a plain one: with lazy writes on the plain handle before it, an O_DSYNC write syncs only its
   * own range, so a crash could keep a durable line and lose the lazy ones before it (a hole in the
   * middle of the file). Tried for the message journal (durable writes through a second O_DSYNC
   * handle when nothing unsynced came before): premium sends were slower in each of four pairs.
   * `adaptive` (instead of `dsync`): the journal switches to O_DSYNC while most of its writes have
   * someone waiting (more than 3 in 4 of the last ~8), and back while few do (fewer than 1 in 4),
   * reopening its file between two writes (after an fdatasync of what the plain handle wrote). For
   * the message journal: a debited send's lines are all lazy (its debit is what the client waits
   * for), a premium send waits for its `sent` line, received messages are durable. Three pairs
   * with the message journal always O_DSYNC (`BENCH_ONLY=premium`, then `debited`, in turn):
   * premium sends faster in each (+7, +10, +3 %), debited ones slower in each (-7, -2, -2 %: their
   * lazy writes each waited for the disk). Adaptive, against the plain journal: premium sends, nine
   * pairs, median 1.05 (0.81 to 1.13) on a noisy machine; debited sends, three pairs, 1.03, 0.98,
   * 1.00 (their journal never switches).
   */
  static async open(file: string, options: { guard: WriteGuard; eager?: boolean; lazyDelayMs?: number; dsync?: boolean; adaptive?: boolean }): Promise<{ journal: Journal; lines: JournalLine[] }> {
    // Where the platform has no O_DSYNC (Windows), the plain handle and an fdatasync do the same.
    const dsync = options.dsync === true && constants.O_DSYNC !== undefined;
    const flags = dsync ? constants.O_RDWR | constants.O_CREAT | constants.O_APPEND | constants.O_DSYNC : 'a+';
    const handle = await open(file, flags, FILE_MODE);
    try {
      const size = (await handle.stat()).size;
      const data = size > 0 ? (await handle.read(Buffer.alloc(size), 0, size, 0)).buffer : Buffer.alloc(0);
      const lines: JournalLine[] = [];
      let start = 0;
      for (let nl = data.indexOf(0x0a, start); nl !== -1; nl = data.indexOf(0x0a, start)) {
        if (nl > start) lines.push({ offset: start, text: data.subarray(start, nl).toString('utf8') });
        start = nl + 1;
      }
      if (start < data.length) {
        // A torn tail: written but never acknowledged (its fdatasync did not return).
        await handle.truncate(start);
      }
      // An O_DSYNC write syncs only what it writes: what a process before this one left unsynced
      // (a lazy line, the cut of a torn tail) is put on disk first, or a power loss could keep a
      // line appended now and lose one before it (a hole in the middle of the file).
      if (dsync || start < data.length) await handle.datasync();
      const journal = new Journal(file, handle, options.guard, start);
      journal.eager = options.eager === true;
      journal.flags = flags;
      journal.adaptive = options.adaptive === true && !dsync && constants.O_DSYNC !== undefined;
      journal.lazyDelayMs = Math.min(Math.max(options.lazyDelayMs ?? 0, 0), MAX_LAZY_DELAY_MS);
      return { journal, lines };
    } catch (err) {
      await handle.close().catch(() => undefined);
      throw err;
    }
  }

  get size(): number {
    return this.end;
  }

  /** Queues a line; returns its offset and a promise that resolves once it is on disk. */
  append(text: string): { offset: number; durable: Promise<void> } {
    const offset = this.enqueue(text);
    const durable = new Promise<void>((resolve, reject) => this.queuedDurable.push({ resolve, reject }));
    this.hurry();
    this.kick();
    return { offset, durable };
  }

  /** Queues a line that need not be durable before the caller goes on; returns its offset. */
  appendLazy(text: string): number {
    // No waiter: nothing can wait for a lazy line, so none is made (a send queues two of them).
    const offset = this.enqueue(text);
    this.kick();
    return offset;
  }

  private enqueue(text: string): number {
    if (this.closed) throw new Error(`journal ${this.file} is closed`);
    // Kept as text and encoded once per write: a Buffer per line was 6 % of the message store's
    // CPU in a profile of sends (pending and sent lines).
    const offset = this.end;
    this.end += Buffer.byteLength(text, 'utf8') + 1;
    this.queued.push(text);
    return offset;
  }

  private kick(): void {
    if (this.writing) return;
    this.writing = this.flushLoop().finally(() => {
      this.writing = null;
      if (this.queued.length > 0) this.kick();
    });
  }

  private async flushLoop(): Promise<void> {
    // Let the lines of the current tick join this write.
    if (!this.eager) await this.gather();
    while (this.queued.length > 0) {
      const lines = this.queued;
      const durable = this.queuedDurable;
      this.queued = [];
      this.queuedDurable = [];
      try {
        this.guard.assertHeld();
        if (this.adaptive) await this.adapt(durable.length > 0);
        const data = Buffer.from(lines.length === 1 ? `${lines[0]!}\n` : `${lines.join('\n')}\n`, 'utf8');
        let written = 0;
        while (written < data.length) written += (await this.handle.write(data, written, data.length - written)).bytesWritten;
        if (durable.length > 0 && this.flags === 'a+') await this.handle.datasync();
        this.written += data.length;
        this.writes += 1;
        for (const w of durable) w.resolve();
        // Lazy lines that came during the write wait for company too (else a steady stream of
        // premium sends is one write per turn again).
        if (this.lazyDelayMs > 0 && this.queued.length > 0 && this.queuedDurable.length === 0) await this.gather();
      } catch (err) {
        const failure = storageError(err, this.file);
        // Lines of a failed write were never acknowledged: cut off whatever part of them reached
        // the file (best effort; a reopen cuts a torn tail anyway).
        await this.handle.truncate(this.written).catch(() => undefined);
        for (const w of durable) w.reject(failure);
        // The owner's in-memory view counted these lines: refuse until reopened.
        this.closed = true;
        for (const w of this.queuedDurable) w.reject(failure);
        this.queued = [];
        this.queuedDurable = [];
        return;
      }
    }
  }

  /**
   * Counts this write in the share of waited-for writes and, when that share crossed a threshold,
   * reopens the file with or without O_DSYNC. Going to O_DSYNC, what the plain handle wrote is
   * synced first: an O_DSYNC write syncs only its own range, and a power loss must not keep it
   * while losing lazy lines before it. A switch that fails (no descriptor left, a sync refused)
   * leaves the journal as it was, to try again at a later write: it is a speed-up, and the write
   * that follows either succeeds in the old mode or fails for its own reason.
   */
  private async adapt(waited: boolean): Promise<void> {
    this.waitedShare += ((waited ? 1 : 0) - this.waitedShare) / 8;
    const dsync = this.flags !== 'a+';
    if (dsync ? this.waitedShare >= 0.25 : this.waitedShare <= 0.75) return;
    const flags = dsync ? 'a+' : constants.O_RDWR | constants.O_CREAT | constants.O_APPEND | constants.O_DSYNC;
    let next: FileHandle;
    try {
      if (!dsync) await this.handle.datasync();
      next = await open(this.file, flags, FILE_MODE);
    } catch {
      return;
    }
    const old = this.handle;
    this.handle = next;
    this.flags = flags;
    // A read in flight on the old handle finishes first (FileHandle.close waits for it).
    await old.close().catch(() => undefined);
  }

  /** Whether writes go out with O_DSYNC now (see `open`'s `dsync` and `adaptive`). */
  get dsync(): boolean {
    return this.flags !== 'a+';
  }

  /**
   * Waits before a write: one turn of the event loop (the lines of the current tick join), or, when
   * only lazy lines are queued and `lazyDelayMs` is set, up to that long unless woken earlier.
   */
  private gather(): Promise<void> {
    if (this.lazyDelayMs === 0 || this.queuedDurable.length > 0) return new Promise((r) => setImmediate(r));
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = null;
        resolve();
      }, this.lazyDelayMs);
      this.wake = () => {
        this.wake = null;
        clearTimeout(timer);
        // Still one turn: lines of the tick that woke us join the write.
        setImmediate(resolve);
      };
    });
  }

  /** Someone waits for the queued lines: end a wait for more lazy lines now. */
  private hurry(): void {
    this.wake?.();
  }

  /** Reads `length` bytes at `offset` (a line written earlier, without its newline). */
  async read(offset: number, length: number): Promise<string> {
    this.hurry();
    await this.writing;
    const { buffer, bytesRead } = await this.handle.read(Buffer.alloc(length), 0, length, offset);
    return buffer.subarray(0, bytesRead).toString('utf8');
  }

  /** Waits for every queued line to be written (durable or not). */
  async drain(): Promise<void> {
    while (this.writing) {
      this.hurry();
      await this.writing;
    }
  }

  /**
   * Replaces the journal with `lines` (compaction): written to a temp file, fsynced, renamed over
   * the journal. Returns the new offset of each line. Appends wait until it is done.
   */
  async rewrite(lines: readonly string[]): Promise<number[]> {
    await this.drain();
    const tmp = tempPath(this.file);
    const offsets: number[] = [];
    let pos = 0;
    const bufs = lines.map((l) => {
      const b = Buffer.from(`${l}\n`, 'utf8');
      offsets.push(pos);
      pos += b.length;
      return b;
    });
    const out = await open(tmp, 'w', FILE_MODE);
    try {
      await out.writeFile(Buffer.concat(bufs));
      await out.sync();
    } catch (err) {
      // A full disk: the temp file must not stay behind (one per failed write would pile up).
      await out.close().catch(() => undefined);
      await rm(tmp, { force: true });
      throw storageError(err, this.file);
    }
    await out.close();
    try {
      this.guard.assertHeld();
      await rename(tmp, this.file);
    } catch (err) {
      await rm(tmp, { force: true });
      throw storageError(err, this.file);
    }
    await syncDir(dirname(this.file));
    // The new handle first, then the old one closed: a read() meanwhile never meets a closed
    // handle (it reads the old file at the old offsets, or the new one once swapped).
    const next = await open(this.file, this.flags, FILE_MODE);
    const old = this.handle;
    this.handle = next;
    await old.close();
    this.end = pos;
    this.written = pos;
    return offsets;
  }

  async close(): Promise<void> {
    await this.drain();
    this.closed = true;
    await this.handle.close();
  }
}
