/**
 * Baileys pings WhatsApp every `keepAliveIntervalMs` (30 s by default) from the moment a socket
 * opens. Sessions that log in together (a daemon restart, a dropped network: a thousand within
 * seconds) would then ping in the same second forever, a spike of CPU and packets every 30 s. Each
 * session draws its own interval instead, uniformly in [MIN, MAX]: the pings spread out within a
 * few rounds, and the mean stays Baileys' 30 s (WhatsApp drops a socket silent for much longer).
 */
export const KEEPALIVE_MIN_MS = 25_000;
export const KEEPALIVE_MAX_MS = 35_000;

/** One session's keepalive interval, from `random` (in [0, 1), as Math.random). */
export function keepAliveIntervalMs(random: () => number = Math.random): number {
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.min(KEEPALIVE_MAX_MS, KEEPALIVE_MIN_MS + Math.floor(r * (KEEPALIVE_MAX_MS - KEEPALIVE_MIN_MS + 1)));
}
