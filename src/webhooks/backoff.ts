/** Spread of the jitter around each configured delay: +-20 %. */
export const JITTER_FRACTION = 0.2;

/**
 * The wait before the next attempt after `attempts` failed ones, or null when that was the last
 * (1 + retryDelaysMs.length attempts in all). `random` in [0, 1): 0.5 gives the exact delay, 0 and
 * 1 the ends of the +-20 % band, so receivers that came back up are not hit by every retry at once.
 */
export function retryDelay(attempts: number, retryDelaysMs: readonly number[], random: () => number): number | null {
  if (attempts < 1 || attempts > retryDelaysMs.length) return null;
  const base = retryDelaysMs[attempts - 1]!;
  const r = Math.min(1, Math.max(0, random()));
  return Math.max(0, Math.round(base * (1 - JITTER_FRACTION + 2 * JITTER_FRACTION * r)));
}
