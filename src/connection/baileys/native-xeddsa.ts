import { verify, type KeyObject } from 'node:crypto';
import { BoundedMap } from '../../domain/bounded-map.js';
import { ed25519PublicKey } from './raw-keys.js';
import { libsignalCurveJs } from './libsignal-curve-js.js';

/** The field of Curve25519 and Ed25519: 2^255 - 19. */
const P = (1n << 255n) - 19n;

function fromLittleEndian(bytes: Uint8Array): bigint {
  let x = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) x = (x << 8n) | BigInt(bytes[i]!);
  return x;
}

/** a^-1 mod P (0 for 0, as curve25519-js's inv25519 answers). */
function invert(a: bigint): bigint {
  let result = 1n;
  let base = a % P;
  for (let e = P - 2n; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * base) % P;
    base = (base * base) % P;
  }
  return result;
}

/**
 * The Ed25519 public key (sign bit clear) of a Curve25519 public key u: y = (u - 1) / (u + 1), as
 * curve25519-js's convertPublicKey computes it (the top bit of u ignored, the result reduced).
 */
function edwardsOf(montgomery: Uint8Array): Buffer {
  const u = fromLittleEndian(montgomery) & ((1n << 255n) - 1n);
  let y = (((u - 1n) % P) + P) % P;
  y = (y * invert(u + 1n)) % P;
  const out = Buffer.alloc(32);
  for (let i = 0; i < 32; i++) {
    out[i] = Number(y & 0xffn);
    y >>= 8n;
  }
  return out;
}

/** Ed25519 key objects of Curve25519 keys seen lately, by key and sign bit (made when first asked). */
const keys = new BoundedMap<string, KeyObject>(8192);

function edwardsKey(montgomery: Uint8Array, signBit: boolean): KeyObject {
  const id = Buffer.from(montgomery).toString('base64') + (signBit ? '-' : '+');
  let key = keys.get(id);
  if (!key) {
    const y = edwardsOf(montgomery);
    if (signBit) y[31]! |= 0x80;
    key = ed25519PublicKey(y);
    keys.set(id, key);
  }
  return key;
}

/**
 * XEdDSA verification (a Curve25519 key's signature, as libsignal makes them) with Node's own
 * Ed25519 (OpenSSL): the key turned into its Edwards form with the sign bit the signature carries
 * in its last byte, that bit cleared from the signature, then Ed25519 verification, as
 * curve25519-js's `verify` does in JavaScript. Same inputs, same checks, same answer for every
 * signature libsignal makes; OpenSSL also refuses a non-canonical s (s >= L), which libsignal's C
 * code refuses too and which is only ever another encoding of a valid signature.
 *
 * Why: curve25519-js took 6 to 10 ms of CPU per signature, in one piece. A first history sync
 * decrypts each group message with a sender key, and libsignal checks every one's signature
 * (`SenderKeyMessage.verifySignature`): 17.5 % of the daemon's samples while 1,000 realistic
 * accounts paired (`BENCH_SESSIONS_PROFILES`), and long turns of the event loop that held up every
 * other instance. OpenSSL does it in ~0.1 ms. The Edwards key of each sender is kept (4,096 keys).
 */
export function nativeXEdDSAVerify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  // curve25519-js's own refusals of malformed input.
  for (const a of [publicKey, message, signature]) if (!(a instanceof Uint8Array)) throw new TypeError('unexpected type, use Uint8Array');
  if (signature.length !== 64) throw new Error('wrong signature length');
  if (publicKey.length !== 32) throw new Error('wrong public key length');
  const sig = Buffer.from(signature);
  const signBit = (sig[63]! & 0x80) !== 0;
  sig[63]! &= 0x7f;
  try {
    return verify(null, message, edwardsKey(publicKey, signBit), sig);
  } catch {
    // A key that is not a point of the curve: no signature verifies with it.
    return false;
  }
}

let installed = false;

/**
 * Puts nativeXEdDSAVerify in place of curve25519-js's `verify`, in the copy libsignal loads (found
 * from where Baileys resolves libsignal): libsignal's `verifySignature` reads `curveJs.verify` at
 * each call, so every check (sender keys, pre-keys, the certificate chain through xeddsa.ts) goes
 * through it. Once per process; idempotent.
 */
export function installNativeXEdDSA(): void {
  if (installed) return;
  installed = true;
  const curveJs = libsignalCurveJs();
  curveJs.verify = nativeXEdDSAVerify;
}
