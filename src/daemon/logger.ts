import { write, writeSync } from 'node:fs';
import { pino, type DestinationStream, type Logger } from 'pino';
import { logOptions } from '../domain/log-options.js';

/**
 * Batch size and age: one write(2) per 32 KiB or 250 ms instead of one per log line. Each write is
 * a trip to libuv's thread pool; at 4 KiB (about 18 request lines) they were ~1.5 % of a send's
 * CPU in the bench's profile. 32 KiB is half a default pipe buffer.
 */
const MIN_LENGTH = 32 * 1024;
const FLUSH_EVERY_MS = 250;
/** A reader that stops reading (a paused pager) must not make the daemon grow without bound. */
const MAX_PENDING = 8 * 1024 * 1024;
/** How long the exit flush keeps retrying a full pipe before it gives up on the rest. */
const EXIT_FLUSH_MS = 1_000;

const sleepCell = new Int32Array(new SharedArrayBuffer(4));

/**
 * The log destination on fd 1. It is ours rather than pino.destination() because SonicBoom's
 * synchronous flush retries a write that failed with EPIPE forever: with stdout closed
 * (`gateway start | head -1`, `| tee log` and Ctrl-C) the daemon released its port and lock, then
 * hung in its exit handler, deaf to SIGTERM. Here every write error other than EAGAIN means
 * stdout is gone: logging stops quietly and nothing ever throws, retries or blocks on it again.
 */
class StdoutSink implements DestinationStream {
  private pending: string[] = [];
  private pendingLength = 0;
  /** Bytes handed to an asynchronous write that has not called back yet. */
  private inFlight = false;
  /** Bytes refused with EAGAIN, to be written again before anything newer. */
  private retry: Buffer | null = null;
  private dead = false;
  private dropped = 0;
  private waiters: Array<(err?: Error) => void> = [];

  constructor(private readonly fd: number) {}

  write(line: string): boolean {
    if (this.dead) return true;
    if (this.pendingLength + line.length > MAX_PENDING) {
      this.dropped++;
      return true;
    }
    this.pending.push(line);
    this.pendingLength += line.length;
    if (this.pendingLength >= MIN_LENGTH) this.flush();
    return true;
  }

  /**
   * Starts an asynchronous write of what is buffered, unless one is under way; `done` (pino's
   * `logger.flush(cb)`) is called once everything buffered so far is written or dropped.
   */
  flush(done?: (err?: Error) => void): void {
    if (done) this.waiters.push(done);
    if (this.dead || this.inFlight) return this.settle();
    const chunk = this.retry ?? this.take();
    this.retry = null;
    if (chunk === null) return this.settle();
    this.inFlight = true;
    write(this.fd, chunk, 0, chunk.length, null, (err, n) => {
      this.inFlight = false;
      if (err) {
        // A full non-blocking pipe: the batching timer tries the same bytes again.
        if (err.code === 'EAGAIN') this.retry = chunk;
        else this.stop();
        return this.settle();
      }
      if (n < chunk.length) this.retry = chunk.subarray(n);
      if (this.retry !== null || this.pendingLength >= MIN_LENGTH || this.waiters.length > 0) this.flush();
    });
  }

  private settle(): void {
    if (this.inFlight || (!this.dead && (this.retry !== null || this.pending.length > 0))) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const done of waiters) done();
  }

  /**
   * Writes what is left before the process exits. A write already handed to the thread pool is
   * not repeated (it may have landed). Bounded: a closed stdout stops it at once, a full one after
   * EXIT_FLUSH_MS.
   */
  flushSync(): void {
    const deadline = Date.now() + EXIT_FLUSH_MS;
    let chunk = this.retry ?? this.take();
    this.retry = null;
    while (chunk !== null && !this.dead) {
      try {
        const n = writeSync(this.fd, chunk);
        chunk = n < chunk.length ? chunk.subarray(n) : this.take();
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN' || Date.now() > deadline) this.stop();
        else Atomics.wait(sleepCell, 0, 0, 10);
      }
    }
  }

  private take(): Buffer | null {
    if (this.dropped > 0) {
      const note = { level: 40, time: new Date().toISOString(), pid: process.pid, dropped: this.dropped, msg: 'log lines dropped: stdout was not keeping up' };
      this.pending.push(`${JSON.stringify(note)}\n`);
      this.dropped = 0;
    }
    if (this.pending.length === 0) return null;
    const chunk = Buffer.from(this.pending.join(''));
    this.pending = [];
    this.pendingLength = 0;
    return chunk;
  }

  private stop(): void {
    this.dead = true;
    this.pending = [];
    this.pendingLength = 0;
    this.retry = null;
  }
}

/**
 * Structured JSON to stdout. Keys and secrets are redacted wherever they might appear. Lines are
 * written in batches (at most 4 KiB or 250 ms old) rather than one write(2) per request, and
 * flushed synchronously, within a bound, when the process exits.
 */
export function createLogger(level: string): Logger {
  const sink = new StdoutSink(1);
  const timer = setInterval(() => sink.flush(), FLUSH_EVERY_MS);
  timer.unref();
  process.once('exit', () => sink.flushSync());
  return pino(logOptions(level), sink);
}
