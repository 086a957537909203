import { KeyPairThread, type RawKeyPair } from './key-pair-thread.js';
import { rawKeyPairInto } from './raw-key-pair.js';

export type { RawKeyPair } from './key-pair-thread.js';

/** One X25519 key pair now, on this thread (what libsignal's `generateKeyPair` does, a quarter of its cost: raw-key-pair.ts). */
export function keyPairNow(): RawKeyPair {
  const bytes = new Uint8Array(64);
  rawKeyPairInto(bytes, 0);
  // Buffer.from copies the 32 bytes into Node's small-buffer slab.
  const pair = { private: Buffer.from(bytes.subarray(0, 32)), public: Buffer.from(bytes.subarray(32, 64)) };
  bytes.fill(0);
  return pair;
}

let thread: KeyPairThread | null = null;

/** `count` X25519 key pairs from this process's key-pair thread (started at the first call). */
export function keyPairsLater(count: number): Promise<RawKeyPair[]> {
  thread ??= new KeyPairThread();
  return thread.batch(count);
}

export interface KeyPairPoolOptions {
  /** Key pairs kept ready, at most (default 4,096: five new devices' pre-keys, 812 each, and then some; 64 bytes each). At least this less one batch once filled. */
  size?: number;
  /** How a batch of key pairs is made off this thread (tests give a slow or failing one). */
  later?: (count: number) => Promise<RawKeyPair[]>;
  /** Called when the refill fails (the pool then stops refilling until the next take). */
  onError?: (err: unknown) => void;
  /** Pairs asked for in one batch (default 128). */
  batch?: number;
  /** Batches in the making at once (default 2). See `refill`. */
  inFlight?: number;
}

/**
 * X25519 key pairs made ahead of need, off the event loop.
 *
 * Why: a device that pairs has no pre-keys on WhatsApp's server, and Baileys then makes 812 of
 * them (`INITIAL_PREKEY_COUNT`, rc14) in one synchronous loop of `Curve.generateKeyPair`, each one a
 * `generateKeyPairSync` of Node with its DER export (libsignal's): 105-240 ms on this machine in one turn of the
 * event loop, during which every other instance's sends, webhooks and keepalives wait, at every
 * pairing (figures in README.md, "Performance"). Here the same calls of OpenSSL run on a thread of
 * their own (key-pair-thread.ts), in batches, ahead of need, and `take()` hands the next one out: a
 * pairing's 812 cost the event loop a few messages and the copies. When the pool runs dry (more
 * pairings at once than it keeps, or the thread starved of CPU) `take()` makes one on this thread
 * as before: slower, never wrong.
 *
 * The keys are what they were: OpenSSL's X25519 generation from its CSPRNG, each handed out once;
 * they wait in this process's memory before use, where Baileys keeps them after.
 * A pool starts filling at the first `take()` or `prime()`; the daemon's is primed when its Baileys
 * connection module loads (installKeyPairPool), so the first pairings find it full.
 */
export class KeyPairPool {
  private readonly ready: RawKeyPair[] = [];
  private readonly size: number;
  private readonly later: (count: number) => Promise<RawKeyPair[]>;
  private readonly onError: (err: unknown) => void;
  private readonly batch: number;
  private readonly inFlight: number;
  /** Batches being made now, and the pairs they will bring. */
  private batches = 0;
  private making = 0;
  /** A refill failed: no new one starts (and no later failure is reported) until the next take. */
  private failed = false;

  constructor(options: KeyPairPoolOptions = {}) {
    this.size = options.size ?? 4096;
    this.later = options.later ?? keyPairsLater;
    this.onError = options.onError ?? (() => {});
    this.batch = Math.max(1, Math.floor(options.batch ?? 128));
    this.inFlight = Math.max(1, Math.floor(options.inFlight ?? 2));
  }

  /** How many key pairs are ready now. */
  get available(): number {
    return this.ready.length;
  }

  /** The next key pair: one made ahead if there is one, else one made now. Starts a refill. */
  take(): RawKeyPair {
    const pair = this.ready.pop() ?? keyPairNow();
    this.failed = false;
    this.refill();
    return pair;
  }

  /** Starts filling the pool now, before anything is taken (a refill that failed is tried again). */
  prime(): void {
    this.failed = false;
    this.refill();
  }

  /** Resolves once the pool is full again, to within one batch (or its refill failed). For tests and warm-up. */
  async filled(): Promise<void> {
    this.prime();
    while (this.batches > 0) await new Promise((r) => setTimeout(r, 5));
  }

  /**
   * Keeps up to `inFlight` batches in the making until the pool is full. Two batches of 128: while
   * one comes back the thread makes the next. The first version made one pair at a time in libuv's
   * thread pool and fell behind 1,000 phones pairing (2.5 a second, 812 pairs each: 2,030 a second,
   * on a loop whose turns ran 5 to 10 ms); the second kept 8 single pairs in the making, which kept
   * up on a fast hour and not on a slow one (README.md, "Performance"). A batch of 128 takes the
   * thread ~5 ms at ~40 µs a pair (raw-key-pair.ts): ~25,000 pairs a second from one thread.
   */
  private refill(): void {
    // Whole batches only: topped up at every take, a nearly full pool asked for 1 to 45 pairs a
    // message (45 messages a second while 100 phones paired); it now holds between `size - batch`
    // and `size`.
    while (!this.failed && this.batches < this.inFlight && this.ready.length + this.making + this.batch <= this.size) {
      const count = this.batch;
      this.batches += 1;
      this.making += count;
      // A `later` that throws instead of rejecting fails the round as a rejection would: never
      // out of take(), which Baileys and libsignal call.
      let made: Promise<RawKeyPair[]>;
      try {
        made = this.later(count);
      } catch (err) {
        made = Promise.reject(err);
      }
      made.then(
        (pairs) => {
          this.batches -= 1;
          this.making -= count;
          for (const pair of pairs.slice(0, count)) this.ready.push(pair);
          this.refill();
        },
        (err: unknown) => {
          this.batches -= 1;
          this.making -= count;
          // One report a round: the other batches in the making may fail for the same reason.
          if (this.failed) return;
          this.failed = true;
          this.onError(err);
        },
      );
    }
  }
}

/** The function of libsignal's `src/curve.js` replaced here (its key pairs carry the type byte). */
interface LibsignalCurve {
  generateKeyPair(): { pubKey: Buffer; privKey: Buffer };
}

const KEY_BUNDLE_TYPE = Buffer.from([5]);

let installed: KeyPairPool | null = null;

/** The pool installed in this process, if any (the daemon installs one where it loads Baileys). */
export function installedKeyPairPool(): KeyPairPool | null {
  return installed;
}

/**
 * Puts one pool behind Baileys' `Curve.generateKeyPair` (its pre-keys, signed pre-key, identity,
 * and every login's Noise ephemeral key: Baileys' own modules read the property at each call) and
 * libsignal's `generateKeyPair` (a session's base key and ratchet keys: libsignal reads it from its
 * curve module's exports at each call). Once per process; returns the pool.
 */
export function installKeyPairPool(curve: { generateKeyPair: () => { private: Uint8Array; public: Uint8Array } }, libsignal: LibsignalCurve, options?: KeyPairPoolOptions): KeyPairPool {
  if (installed) return installed;
  const pool = new KeyPairPool(options);
  installed = pool;
  // Filled from now: the first pairing after a start finds its 812 pre-keys made.
  pool.prime();
  curve.generateKeyPair = () => pool.take();
  libsignal.generateKeyPair = () => {
    const pair = pool.take();
    return { pubKey: Buffer.concat([KEY_BUNDLE_TYPE, pair.public]), privKey: pair.private };
  };
  return pool;
}
