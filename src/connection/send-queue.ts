import { GatewayError } from '../domain/errors.js';

export interface PacingSettings {
  minIntervalMs: number;
  jitterMs: number;
  maxWaitMs: number;
}

/**
 * Anti-ban pacing for one instance: sends leave one at a time, at least `minIntervalMs` (+ up to
 * `jitterMs` random) apart. A send that would wait longer than `maxWaitMs` is refused at once with
 * 429 RATE_LIMITED rather than held in memory.
 */
export class SendQueue {
  private tail: Promise<void> = Promise.resolve();
  private nextFreeAt = 0;
  private waiting = 0;

  constructor(
    private readonly settings: PacingSettings,
    private readonly now: () => number = Date.now,
    private readonly random: () => number = Math.random,
  ) {}

  get depth(): number {
    return this.waiting;
  }

  /** Runs `task` in its turn; throws RATE_LIMITED if its turn is too far away. */
  run<T>(task: () => Promise<T>): Promise<T> {
    const { minIntervalMs, jitterMs } = this.settings;
    // Without pacing (sandbox instances) the task runs at once, with no promise wrapped around it.
    if (minIntervalMs === 0 && jitterMs === 0) return task();
    return this.paced(task);
  }

  private async paced<T>(task: () => Promise<T>): Promise<T> {
    const { minIntervalMs, jitterMs, maxWaitMs } = this.settings;
    const now = this.now();
    const gap = minIntervalMs + jitterMs / 2;
    const expectedWait = Math.max(0, this.nextFreeAt - now) + this.waiting * gap;
    if (expectedWait > maxWaitMs) {
      throw new GatewayError('RATE_LIMITED', `send queue for this instance is full (about ${Math.ceil(expectedWait / 1000)} s of sends waiting)`, {
        retryAfter: Math.max(1, Math.ceil((expectedWait - maxWaitMs) / 1000)),
      });
    }
    this.waiting += 1;
    const turn = this.tail.then(async () => {
      const wait = this.nextFreeAt - this.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    });
    const done = turn.then(async () => {
      this.waiting -= 1;
      try {
        return await task();
      } finally {
        this.nextFreeAt = this.now() + minIntervalMs + Math.floor(this.random() * jitterMs);
      }
    });
    this.tail = done.then(() => undefined, () => undefined);
    return done;
  }
}

/** Sliding one-minute limit of sends per instance (config `rateLimit.sendsPerMinute`, 0 = off). */
export class RateWindow {
  private readonly stamps: number[] = [];
  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records one send or throws RATE_LIMITED with the seconds until a slot frees up. */
  take(): void {
    if (this.perMinute <= 0) return;
    const now = this.now();
    while (this.stamps.length > 0 && this.stamps[0]! <= now - 60_000) this.stamps.shift();
    if (this.stamps.length >= this.perMinute) {
      const retryAfter = Math.max(1, Math.ceil((this.stamps[0]! + 60_000 - now) / 1000));
      throw new GatewayError('RATE_LIMITED', `more than ${this.perMinute} sends per minute for this instance`, { retryAfter });
    }
    this.stamps.push(now);
  }
}
