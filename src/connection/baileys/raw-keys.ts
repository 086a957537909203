import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';

/**
 * OpenSSL key objects from raw 32-byte Curve25519 and Ed25519 keys, imported as JWK rather than
 * DER. Node hands DER to OpenSSL 3's decoder framework, which tries decoder after decoder: on this
 * machine, on Node 20 (OpenSSL 3.0), 509-796 µs for an X25519 private key and 121-196 µs for a
 * public key, against 60-172 and 17-27 µs through JWK (`EVP_PKEY_new_raw_*_key` directly), the
 * same key either way. Node 24 (OpenSSL 3.5) decodes DER as fast as JWK (115-123 against 115-137
 * µs, 50-75 against 38-61): there the JWK form neither gains nor costs. `test/unit/raw-keys.test.ts`
 * logs both on the runtime it runs on. libsignal imports
 * both keys of every agreement (each ratchet step of a decryption, each session a first history
 * sync sets up) and that import was 6 % of the daemon's CPU while 300 accounts paired
 * (`BENCH_SESSIONS_PROFILES`: `init` under createPrivateKey/createPublicKey).
 *
 * A private OKP JWK must carry `x`. Node 20 only checks that it is a string and OpenSSL builds the
 * key from `d` alone, deriving the public half itself; we do not have `x` at hand, so it is left
 * empty. Node 24.22 refuses an empty `x` (ERR_CRYPTO_INVALID_JWK; CI found it): there the private
 * import falls back to DER for good, which costs nothing on that line (see above), while public
 * keys stay on JWK. Each kind falls back on its own: slower at worst, never wrong.
 */

// DER prefixes of raw keys (libsignal's src/curve.js for X25519; RFC 8410 for Ed25519).
export const X25519_SPKI = Buffer.from([48, 42, 48, 5, 6, 3, 43, 101, 110, 3, 33, 0]);
export const X25519_PKCS8 = Buffer.from([48, 46, 2, 1, 0, 48, 5, 6, 3, 43, 101, 110, 4, 34, 4, 32]);
const ED25519_SPKI = Buffer.from([48, 42, 48, 5, 6, 3, 43, 101, 112, 3, 33, 0]);

export type KeyKind = 'private' | 'public';

const jwk: Record<KeyKind, boolean> = { private: true, public: true };

function imported(kind: KeyKind, raw: Uint8Array, fast: () => KeyObject, der: () => KeyObject): KeyObject {
  // OpenSSL's DER import takes the first 32 bytes of a longer key; JWK refuses it. Neither may see one.
  if (raw.byteLength !== 32) throw new Error(`a raw Curve25519 key is 32 bytes, not ${raw.byteLength}`);
  if (!jwk[kind]) return der();
  try {
    return fast();
  } catch {
    // A key DER refuses too is bad input (der() throws), not a runtime refusing the JWK form.
    const key = der();
    jwk[kind] = false;
    return key;
  }
}

const b64url = (raw: Uint8Array): string => Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('base64url');

export function x25519PublicKey(raw: Uint8Array): KeyObject {
  return imported(
    'public',
    raw,
    () => createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: b64url(raw) }, format: 'jwk' }),
    () => createPublicKey({ key: Buffer.concat([X25519_SPKI, raw]), format: 'der', type: 'spki' }),
  );
}

export function x25519PrivateKey(raw: Uint8Array): KeyObject {
  return imported(
    'private',
    raw,
    () => createPrivateKey({ key: { kty: 'OKP', crv: 'X25519', d: b64url(raw), x: '' }, format: 'jwk' }),
    () => createPrivateKey({ key: Buffer.concat([X25519_PKCS8, raw]), format: 'der', type: 'pkcs8' }),
  );
}

export function ed25519PublicKey(raw: Uint8Array): KeyObject {
  return imported(
    'public',
    raw,
    () => createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: b64url(raw) }, format: 'jwk' }),
    () => createPublicKey({ key: Buffer.concat([ED25519_SPKI, raw]), format: 'der', type: 'spki' }),
  );
}

/** For tests: whether keys of this kind are still imported as JWK (false once the runtime refused it). */
export function jwkImportInUse(kind: KeyKind): boolean {
  return jwk[kind];
}
