import type { ManualClock } from '../domain/clock.js';

/** An opaque timer handle. */
export interface TimerHandle {
  cancel(): void;
}

/**
 * How the deliverer waits for the next retry. The default uses real timers; tests pass
 * ManualTimers so a retry schedule of hours runs without sleeping.
 */
export interface Timers {
  after(ms: number, fn: () => void): TimerHandle;
}

export const systemTimers: Timers = {
  after(ms, fn) {
    // Node caps timeouts at 2^31-1 ms (~24.8 days); the deliverer re-arms after waking anyway.
    const t = setTimeout(fn, Math.min(Math.max(0, ms), 2_147_483_647));
    t.unref();
    return { cancel: () => clearTimeout(t) };
  },
};

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
