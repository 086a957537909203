import { pauseIfLong } from '../../domain/time-slice.js';

/**
 * Where Baileys' app-state decoding looks for the daemon's time slices: `patches/` changes
 * `decodeSyncdMutations` (lib/Utils/chat-utils.js) to call the function under this key before each
 * mutation and to wait for the promise it may return. Without the function it runs as upstream.
 */
export const APP_STATE_PAUSE_KEY = Symbol.for('wa-gateway.pauseIfLong');

/**
 * Lets Baileys' app-state decoding give the event loop back once a turn has run for SLICE_MS
 * (domain/time-slice.ts), in line with every other chain paused that way.
 *
 * Why: a first login decodes the account's app state (a realistic account: ~550 mutations in its
 * snapshots), and every mutation's key after the first comes from a cache, so nothing in that loop
 * waits on anything: each mutation's two HMACs, AES decryption, protobuf decoding and sync action
 * ran in one turn, 40 to 60 ms of Baileys' work plus the collections it caused. In a CPU profile of
 * 1,000 accounts pairing matched to a 5 ms gap recorder (README, "Performance"), that loop was the
 * largest part of every event-loop gap over 85 ms.
 */
export function installAppStateSlices(): void {
  (globalThis as Record<symbol, unknown>)[APP_STATE_PAUSE_KEY] = pauseIfLong;
}
