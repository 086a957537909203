import { DEFAULT_CACHE_TTLS, type SocketConfig } from '@whiskeysockets/baileys';

type CacheStore = NonNullable<SocketConfig['msgRetryCounterCache']>;

interface Entry {
  value: unknown;
  expiresAt: number;
}

/**
 * A cache for one Baileys socket whose entries expire `ttlMs` after they were set, without a timer.
 *
 * Baileys makes each socket five NodeCaches, four of them only when it is given none, and each
 * NodeCache runs its own 10-minute interval to sweep itself: 5,000 sessions wake the daemon ~42
 * times a second for that alone (~8 with these four given; computed from the count), and each
 * wake-up from idle costs far more than its work on these machines (see keepalive-clock.ts). Here
 * every entry has the same lifetime, so the order of insertion (a set moves the key to the end) is
 * the order of expiry: a set drops the expired entries at the front, a get ignores an expired one,
 * and `capacity` bounds what a busy session keeps meanwhile. Values are kept as given (NodeCache's
 * `useClones: false`, as Baileys sets it).
 */
export class TtlCache implements CacheStore {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly ttlMs: number,
    private readonly capacity: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
  }

  get size(): number {
    return this.entries.size;
  }

  get<T>(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value as T;
  }

  set<T>(key: string, value: T): boolean {
    const now = this.now();
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: now + this.ttlMs });
    for (const [oldest, entry] of this.entries) {
      if (entry.expiresAt > now && this.entries.size <= this.capacity) break;
      this.entries.delete(oldest);
    }
    return true;
  }

  /** Baileys reads the device lists of many users at once when this is there. */
  mget<T>(keys: string[]): Promise<Record<string, T | undefined>> {
    const out: Record<string, T | undefined> = {};
    for (const key of keys) out[key] = this.get<T>(key);
    return Promise.resolve(out);
  }

  mset<T>(entries: Array<{ key: string; value: T }>): boolean {
    for (const { key, value } of entries) this.set(key, value);
    return true;
  }

  del(key: string): number {
    return this.entries.delete(key) ? 1 : 0;
  }

  flushAll(): void {
    this.entries.clear();
  }
}

/**
 * The caches of one socket, with Baileys' own lifetimes. Bounds: retries and placeholder resends
 * are per message (a few thousand covers any burst within their hour); device lists are per user,
 * and a send to a large group reads one per member, so that bound is the largest.
 */
export function socketCaches(): Pick<SocketConfig, 'msgRetryCounterCache' | 'callOfferCache' | 'userDevicesCache' | 'placeholderResendCache'> {
  return {
    msgRetryCounterCache: new TtlCache(DEFAULT_CACHE_TTLS.MSG_RETRY * 1000, 2_000),
    callOfferCache: new TtlCache(DEFAULT_CACHE_TTLS.CALL_OFFER * 1000, 500),
    userDevicesCache: new TtlCache(DEFAULT_CACHE_TTLS.USER_DEVICES * 1000, 10_000),
    placeholderResendCache: new TtlCache(DEFAULT_CACHE_TTLS.MSG_RETRY * 1000, 2_000),
  };
}
