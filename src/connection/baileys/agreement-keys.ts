import { createPrivateKey, createPublicKey, diffieHellman, type KeyObject } from 'node:crypto';
import { createRequire } from 'node:module';
import { BoundedMap } from './lru.js';

/** The function of libsignal's `src/curve.js` replaced here. */
interface LibsignalCurve {
  calculateAgreement(publicKey: Buffer, privateKey: Buffer): Buffer;
}

// libsignal's own DER prefixes for raw X25519 keys (src/curve.js).
const PUBLIC_KEY_DER_PREFIX = Buffer.from([48, 42, 48, 5, 6, 3, 43, 101, 110, 3, 33, 0]);
const PRIVATE_KEY_DER_PREFIX = Buffer.from([48, 46, 2, 1, 0, 48, 5, 6, 3, 43, 101, 110, 4, 34, 4, 32]);

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
 * libsignal's `calculateAgreement` (X25519) with the key objects kept: it parsed both keys from DER
 * into new OpenSSL key objects at every call, and that parsing (`init` under createPrivateKey and
 * createPublicKey) was 15 % of the daemon's samples in its long turns while 1,000 accounts paired
 * (every session a first history sync sets up, every ratchet step of a decryption). The same
 * answer: the same keys, the same `diffieHellman`. Input that is not the usual shape (a 33-byte
 * public key of type 5, a 32-byte private key, both Buffers) goes to libsignal's own function,
 * which checks and refuses it as before.
 */
export function cachedAgreement(original: LibsignalCurve['calculateAgreement']): LibsignalCurve['calculateAgreement'] {
  return (publicKey, privateKey) => {
    if (!(publicKey instanceof Buffer) || publicKey.byteLength !== 33 || publicKey[0] !== 5 || !(privateKey instanceof Buffer) || privateKey.byteLength !== 32) {
      return original(publicKey, privateKey);
    }
    const pub = cached(publicKeys, publicKey.subarray(1), (raw) => createPublicKey({ key: Buffer.concat([PUBLIC_KEY_DER_PREFIX, raw]), format: 'der', type: 'spki' }));
    const priv = cached(privateKeys, privateKey, (raw) => createPrivateKey({ key: Buffer.concat([PRIVATE_KEY_DER_PREFIX, raw]), format: 'der', type: 'pkcs8' }));
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
  const fromBaileys = createRequire(import.meta.resolve('@whiskeysockets/baileys'));
  const curve = fromBaileys('libsignal/src/curve.js') as LibsignalCurve;
  if (typeof curve.calculateAgreement !== 'function') throw new Error('libsignal/src/curve.js has no calculateAgreement');
  curve.calculateAgreement = cachedAgreement(curve.calculateAgreement.bind(curve));
}
