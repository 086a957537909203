/** Injectable time source so premium expiry, retries and handovers test without sleeping. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export const DAY_MS = 86_400_000;
