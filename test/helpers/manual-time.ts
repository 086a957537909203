import type { Clock } from '../../src/domain/clock.js';
import type { TimerHandle, Timers } from '../../src/domain/timers.js';

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(private t = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
  set(ms: number): void {
    this.t = ms;
  }
}

/** Timers driven by a ManualClock: `advance(ms)` moves the clock and fires what came due. */
export class ManualTimers implements Timers {
  private pending: Array<{ at: number; fn: () => void; seq: number }> = [];
  private seq = 0;

  constructor(readonly clock: ManualClock) {}

  after(ms: number, fn: () => void): TimerHandle {
    const entry = { at: this.clock.now() + Math.max(0, ms), fn, seq: this.seq++ };
    this.pending.push(entry);
    return {
      cancel: () => {
        this.pending = this.pending.filter((e) => e !== entry);
      },
    };
  }

  /** Moves the clock forward and runs every timer now due, earliest first. */
  advance(ms: number): void {
    this.clock.advance(ms);
    const now = this.clock.now();
    const due = this.pending.filter((e) => e.at <= now).sort((a, b) => a.at - b.at || a.seq - b.seq);
    this.pending = this.pending.filter((e) => e.at > now);
    for (const e of due) e.fn();
  }

  /** Timers waiting to fire (for assertions). */
  get size(): number {
    return this.pending.length;
  }
}
