import { diffieHellman, type KeyObject } from 'node:crypto';
import { Curve } from '@whiskeysockets/baileys';
import { requireFromBaileys } from './from-baileys.js';
import { BoundedMap } from '../../domain/bounded-map.js';
import { x25519PrivateKey, x25519PublicKey } from './raw-keys.js';

/** The function of libsignal's `src/curve.js` replaced here. */
interface LibsignalCurve {
  calculateAgreement(publicKey: Buffer, privateKey: Buffer): Buffer;
}

/** Key objects of the X25519 keys used lately (an account's identity and signed pre-key recur). */
const privateKeys = new BoundedMap<string, KeyObject>(1024);
const publicKeys = new BoundedMap<string, KeyObject>(4096);

function cached(map: BoundedMap<string, KeyObject>, raw: Buffer, make: (raw: Buffer) => KeyObject): KeyObject {
  const id = raw.toString('base64');
  let key = map.get(id);
  if (!key) {
    key = make(raw);
    map.set(id, key);
  }
  return key;
}

/**
 * libsignal's `calculateAgreement` (X25519) with the key objects kept, and imported as JWK
 * (raw-keys.ts) when new: it parsed both keys from DER into new OpenSSL key objects at every call,
 * and that parsing (`init` under createPrivateKey and
 * createPublicKey) was 15 % of the daemon's samples in its long turns while 1,000 accounts paired
 * (every session a first history sync sets up, every ratchet step of a decryption). The same
 * answer: the same keys, the same `diffieHellman`. Input that is not the usual shape (a 33-byte
 * public key of type 5, a 32-byte private key, both Buffers) goes to libsignal's own function,
 * which checks and refuses it as before.
 */
export function cachedAgreement(original: LibsignalCurve['calculateAgreement'], { cachePrivate = true }: { cachePrivate?: boolean } = {}): LibsignalCurve['calculateAgreement'] {
  return (publicKey, privateKey) => {
    if (!(publicKey instanceof Buffer) || publicKey.byteLength !== 33 || publicKey[0] !== 5 || !(privateKey instanceof Buffer) || privateKey.byteLength !== 32) {
      return original(publicKey, privateKey);
    }
    const pub = cached(publicKeys, publicKey.subarray(1), x25519PublicKey);
    const priv = cachePrivate ? cached(privateKeys, privateKey, x25519PrivateKey) : x25519PrivateKey(privateKey);
    return diffieHellman({ privateKey: priv, publicKey: pub });
  };
}

let installed = false;

/**
 * Puts cachedAgreement in place of `calculateAgreement` on libsignal's curve module (its own
 * session builder and cipher read it from that object at each call). Once per process; idempotent.
 */
export function installCachedAgreement(): void {
  if (installed) return;
  installed = true;
  const curve = requireFromBaileys('libsignal/src/curve.js') as LibsignalCurve;
  if (typeof curve.calculateAgreement !== 'function') throw new Error('libsignal/src/curve.js has no calculateAgreement');
  const original = curve.calculateAgreement.bind(curve);
  curve.calculateAgreement = cachedAgreement(original);
  // Baileys' own agreements (the Noise handshake of every login, pairing by code) go through its
  // `Curve.sharedKey`, which calls the function libsignal exported when Baileys was loaded. Their
  // private keys are mostly one-use (the handshake's ephemeral): imported each time, not kept.
  const agreement = cachedAgreement(original, { cachePrivate: false });
  Curve.sharedKey = (privateKey, publicKey) => {
    const pub = asBuffer(publicKey);
    return Buffer.from(agreement(pub.byteLength === 33 ? pub : Buffer.concat([KEY_BUNDLE_TYPE, pub]), asBuffer(privateKey)));
  };
}

/** Signal's type byte in front of a 32-byte Curve25519 public key. */
const KEY_BUNDLE_TYPE = Buffer.from([5]);

function asBuffer(a: Uint8Array): Buffer {
  return Buffer.isBuffer(a) ? a : Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}
