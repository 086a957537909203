import { DEFAULT_CONNECTION_CONFIG } from '@whiskeysockets/baileys';

/**
 * Baileys pings WhatsApp every `keepAliveIntervalMs` (30 s by default) from the moment a socket
 * opens. Sessions that log in together (a daemon restart, a dropped network: a thousand within
 * seconds) would then ping in the same second forever, a spike of CPU and packets every 30 s. Each
 * session draws its own interval instead, uniformly within a sixth of Baileys' default either side
 * (25 to 35 s for its 30 s): the pings spread out within a few rounds, and the mean stays Baileys'
 * (WhatsApp drops a socket silent for much longer). The default is read at each draw, so whatever
 * sets Baileys' default (a test that shortens it) still sets the centre.
 */
export const KEEPALIVE_SPREAD = 1 / 6;

/** One session's keepalive interval, from `random` (in [0, 1), as Math.random). */
export function keepAliveIntervalMs(random: () => number = Math.random, base: number = DEFAULT_CONNECTION_CONFIG.keepAliveIntervalMs): number {
  const r = Math.min(Math.max(random(), 0), 1);
  const min = Math.round(base * (1 - KEEPALIVE_SPREAD));
  const max = Math.round(base * (1 + KEEPALIVE_SPREAD));
  return Math.min(max, min + Math.floor(r * (max - min + 1)));
}
