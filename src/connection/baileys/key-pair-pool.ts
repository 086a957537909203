import { generateKeyPair, generateKeyPairSync } from 'node:crypto';
import { X25519_PKCS8, X25519_SPKI } from './raw-keys.js';

/** A Curve25519 (X25519) key pair as raw 32-byte halves. */
export interface RawKeyPair {
  private: Buffer;
  public: Buffer;
}

// What Node's DER export puts before the 32 raw bytes (libsignal's src/curve.js slices the same way).
const SPKI_PREFIX = X25519_SPKI.length;
const PKCS8_PREFIX = X25519_PKCS8.length;

function raw(publicDer: Buffer, privateDer: Buffer): RawKeyPair {
  // Buffer.from copies the 32 bytes into Node's small-buffer slab: the DER buffers are not kept.
  return { private: Buffer.from(privateDer.subarray(PKCS8_PREFIX, PKCS8_PREFIX + 32)), public: Buffer.from(publicDer.subarray(SPKI_PREFIX, SPKI_PREFIX + 32)) };
}

/** One X25519 key pair now, on this thread (what libsignal's `generateKeyPair` does). */
export function keyPairNow(): RawKeyPair {
  const { publicKey, privateKey } = generateKeyPairSync('x25519', { publicKeyEncoding: { format: 'der', type: 'spki' }, privateKeyEncoding: { format: 'der', type: 'pkcs8' } });
  return raw(publicKey, privateKey);
}

/** One X25519 key pair from libuv's thread pool. */
export function keyPairLater(): Promise<RawKeyPair> {
  return new Promise((resolve, reject) => generateKeyPair('x25519', { publicKeyEncoding: { format: 'der', type: 'spki' }, privateKeyEncoding: { format: 'der', type: 'pkcs8' } }, (err, publicKey, privateKey) => (err ? reject(err) : resolve(raw(publicKey, privateKey)))));
}

export interface KeyPairPoolOptions {
  /** Key pairs kept ready (default 4,096: five new devices' pre-keys, 812 each, and then some; 64 bytes each). */
  size?: number;
  /** How a key pair is made off this thread (tests give a slow or failing one). */
  later?: () => Promise<RawKeyPair>;
  /** Called when the refill fails (the pool then stops refilling until the next take). */
  onError?: (err: unknown) => void;
  /** Key pairs in the making at once (default 8). See `refill`. */
  inFlight?: number;
}

/**
 * X25519 key pairs made ahead of need, off the event loop.
 *
 * Why: a device that pairs has no pre-keys on WhatsApp's server, and Baileys then makes 812 of
 * them (`INITIAL_PREKEY_COUNT`, rc14) in one synchronous loop of `Curve.generateKeyPair`, each one a
 * `generateKeyPairSync` of Node with its DER export: 105-240 ms on this machine in one turn of the
 * event loop, during which every other instance's sends, webhooks and keepalives wait, at every
 * pairing (figures in README.md, "Performance"). Here the same calls of OpenSSL run in libuv's
 * thread pool, 8 at a time (the daemon's pool has 16 threads; the others stay free for the
 * journals' writes and syncs; see `refill`), ahead of need, and `take()` hands the next one out: a pairing's 812 cost a few
 * milliseconds of the event loop. When the pool runs dry (more pairings at once than it keeps)
 * `take()` makes one on this thread as before: slower, never wrong.
 *
 * The keys are what they were: OpenSSL's X25519 generation from its CSPRNG, each handed out once;
 * they wait in this process's memory before use, where Baileys keeps them after.
 * A pool starts filling at the first `take()` or `prime()`; the daemon's is primed when its Baileys
 * connection module loads (installKeyPairPool), so the first pairings find it full.
 */
export class KeyPairPool {
  private readonly ready: RawKeyPair[] = [];
  private readonly size: number;
  private readonly later: () => Promise<RawKeyPair>;
  private readonly onError: (err: unknown) => void;
  private readonly inFlight: number;
  /** Key pairs being made now. */
  private making = 0;
  /** A refill failed: no new one starts (and no later failure is reported) until the next take. */
  private failed = false;

  constructor(options: KeyPairPoolOptions = {}) {
    this.size = options.size ?? 4096;
    this.later = options.later ?? keyPairLater;
    this.onError = options.onError ?? (() => {});
    this.inFlight = Math.max(1, Math.floor(options.inFlight ?? 8));
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

  /** Resolves once the pool is full again (or its refill failed). For tests and warm-up. */
  async filled(): Promise<void> {
    this.prime();
    while (this.making > 0) await new Promise((r) => setTimeout(r, 5));
  }

  /**
   * Keeps `inFlight` key pairs in the making until the pool is full. The thread pool hands its
   * finished tasks to the event loop once a turn, so a refill gets at most `inFlight` pairs a turn:
   * one at a time (as at first) fell behind 1,000 phones pairing (2.5 a second, 812 pairs each:
   * 2,030 a second, on a loop whose turns ran 5 to 10 ms), the pool ran dry and `take()` made them
   * on this thread, the longest stalls of the bench's pairing (keyPairNow in 20 of the 73 gaps over
   * 40 ms of one profiled run at 1,000; 122 ms at the first pairing, 103 ms at the last). 8 at once
   * kept it supplied but for the first pairings after a start (hence `prime()` at install). 32 at
   * once ran up to 16 threads of key generation beside the event loop on 2 cores: the probe's sends
   * while phones paired took a p50 of 19 ms against 7 (one run each, with the recorders on).
   */
  private refill(): void {
    while (!this.failed && this.making < this.inFlight && this.ready.length + this.making < this.size) {
      this.making += 1;
      // A `later` that throws instead of rejecting fails the round as a rejection would: never
      // out of take(), which Baileys and libsignal call.
      let made: Promise<RawKeyPair>;
      try {
        made = this.later();
      } catch (err) {
        made = Promise.reject(err);
      }
      made.then(
        (pair) => {
          this.making -= 1;
          this.ready.push(pair);
          this.refill();
        },
        (err: unknown) => {
          this.making -= 1;
          // One report a round: the other pairs in the making may fail for the same reason.
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
