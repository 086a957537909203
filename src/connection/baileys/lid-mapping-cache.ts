import { DEFAULT_CONNECTION_CONFIG, type SocketConfig } from '@whiskeysockets/baileys';
import { BoundedMap } from '../../domain/bounded-map.js';

/**
 * LID <-> phone-number entries each session keeps in this cache (a pair is two entries): those of
 * the chats in use. The others are read from its key store when asked for, as Baileys does on a
 * miss; the gateway's key store holds every mapping in memory anyway (auth-state.ts), so a larger
 * cache only held them twice (at 2,000 entries, ~100 KB a realistic account: 600 entries, their
 * keys and the Map's table, in a heap snapshot of 200 paired sessions).
 */
export const LID_MAPPING_CACHE_ENTRIES = 256;

interface MappingCache {
  get(key: string): string | undefined;
  set(key: string, value: string): void;
  clear(): void;
}

function isMappingCache(value: unknown): value is MappingCache {
  const c = value as Partial<MappingCache> | null;
  return typeof c?.get === 'function' && typeof c.set === 'function' && typeof c.clear === 'function';
}

/**
 * Baileys' signal repository with a bounded LID mapping cache that arms no timer per entry.
 *
 * Baileys keeps every LID mapping it meets in an lru-cache with a 3-day TTL and `ttlAutopurge`,
 * which arms a timer for each entry (and re-arms it at every read). After a realistic first sync
 * (300 contacts) that was ~620 timers a session, each with its closure and context: 123,000
 * timers in a daemon that had just paired 200 accounts (`BENCH_SESSIONS_SNAPSHOTS`, 2026-11-29),
 * all of it traced by every full garbage collection. With this cache the same daemon's heap after
 * pairing was 183.9 MiB instead of 222.7, its RSS 371.1 MiB instead of 449.9 (`BENCH_SESSIONS=200
 * BENCH_SESSIONS_CURVE=200 BENCH_SESSIONS_ROUNDS=1 BENCH_PAIRING_SEND_RATE=0
 * BENCH_SESSIONS_BUSY=0 node --import=tsx bench/sessions.ts`). A mapping does not go stale (the
 * key store keeps them for good and Baileys writes through this cache), so a size bound replaces
 * the TTL.
 */
export function boundedSignalRepository(entries: number): SocketConfig['makeSignalRepository'] {
  return (auth, logger, pnToLID) => {
    const repository = DEFAULT_CONNECTION_CONFIG.makeSignalRepository(auth, logger, pnToLID);
    const store = repository.lidMapping as unknown as { mappingCache?: unknown };
    // Only where Baileys' store has the shape this was written against; otherwise its own stays.
    if (isMappingCache(store.mappingCache)) store.mappingCache = new BoundedMap<string, string>(entries);
    return repository;
  };
}

export const makeSignalRepository = boundedSignalRepository(LID_MAPPING_CACHE_ENTRIES);
