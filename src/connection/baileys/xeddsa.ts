import { requireFromBaileys } from './from-baileys.js';

/** The one function of libsignal's `src/curve.js` used here (its curve.d.ts says the same). */
interface LibsignalCurve {
  verifySignature(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean;
}

// The very copy Baileys signs and checks with (lib/Utils/crypto.js), not a second one bundled.
const curve = requireFromBaileys('libsignal/src/curve.js') as LibsignalCurve;
if (typeof curve.verifySignature !== 'function') throw new Error('libsignal/src/curve.js has no verifySignature');

/** libsignal's type byte for a Curve25519 key (DJB_TYPE, Baileys' KEY_BUNDLE_TYPE). */
const DJB_TYPE = 5;

/**
 * Checks an XEdDSA signature (a Curve25519 key's signature, as WhatsApp's certificate chain and
 * libsignal use) and answers with the result: true only for a signature that verifies.
 *
 * Baileys 7.0.0-rc14's `Curve.verify` calls the same libsignal function but discards its answer
 * (it expects a throw for a bad signature; libsignal returns false), so every well-formed signature
 * passed. libsignal's `verifySignature` (the key turned into an Edwards point with the sign bit
 * from the signature, then Ed25519 verification: in OpenSSL since native-xeddsa.ts replaced
 * curve25519-js's `verify` under it) is the check; this only reads its result. Malformed input (key
 * not 32 bytes or 33 starting with 5, signature not 64 bytes) makes libsignal throw: that is a
 * refusal too. OpenSSL refuses a non-canonical s (s >= L), as libsignal's C code does.
 */
export function verifyXEdDSA(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  try {
    // libsignal wants the key as a Buffer, and logs a warning for a 32-byte one: the 33-byte form.
    const key = publicKey.length === 32 ? Buffer.concat([Buffer.of(DJB_TYPE), publicKey]) : Buffer.from(publicKey);
    return curve.verifySignature(key, message, signature) === true;
  } catch {
    return false;
  }
}
