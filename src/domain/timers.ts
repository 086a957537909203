/** An opaque timer handle. */
export interface TimerHandle {
  cancel(): void;
}

/**
 * How the daemon waits for a time on its clock (webhook retries, premium expiry, handover
 * timeouts). The default uses real timers; tests pass manual timers driven by a manual clock, so a
 * schedule of hours or days runs without sleeping.
 */
export interface Timers {
  after(ms: number, fn: () => void): TimerHandle;
}

/** Node caps timeouts at 2^31-1 ms (about 24.8 days); callers re-arm when they wake early. */
export const MAX_TIMER_MS = 2_147_483_647;

export const systemTimers: Timers = {
  after(ms, fn) {
    const t = setTimeout(fn, Math.min(Math.max(0, ms), MAX_TIMER_MS));
    t.unref();
    return { cancel: () => clearTimeout(t) };
  },
};
