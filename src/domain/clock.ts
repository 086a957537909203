/** Injectable time source so premium expiry, retries and handovers test without sleeping. */
export interface Clock {
  now(): number;
  /**
   * Milliseconds on a clock that never steps (what waits are measured on); absent, `now` is
   * taken to be one (a test clock that only moves forward).
   */
  monotonic?(): number;
}

export const systemClock: Clock = { now: () => Date.now(), monotonic: () => performance.now() };

export const DAY_MS = 86_400_000;
