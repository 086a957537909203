import { hash } from 'node:crypto';
import { BoundedMap } from '../../domain/bounded-map.js';

/** A signature check: Baileys' `Curve.verify` shape (key, signed bytes, signature). */
export type VerifySignature = (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array) => boolean;

/**
 * Remembers which exact inputs `verify` accepted. Baileys checks the server's Noise certificate
 * chain at every login (`processHandshake`, lib/Utils/noise-handler.js): two signatures, each
 * checked in pure JavaScript (libsignal's curve25519), 6 to 10 ms of CPU apiece, for a chain that is
 * the same for every connection to a server. Measured on a thousand sessions logging in after a
 * restart, that was a quarter of the daemon's CPU. The checks now run on OpenSSL (native-xeddsa.ts,
 * ~110 µs apiece); a hit here costs a SHA-256 of a few hundred bytes, still less. A signature check
 * is a pure function of its inputs, so answering a repeat from memory changes nothing but the time.
 *
 * Only acceptances are remembered: a refusal is checked again each time, so nothing a server sends
 * can make the cache answer anything but what `verify` itself once answered true for the same key,
 * bytes and signature. Bounded: least recently used inputs are forgotten beyond `capacity`.
 */
export function memoizeVerify(verify: VerifySignature, capacity = 256): VerifySignature {
  const accepted = new BoundedMap<string, true>(capacity);
  return (publicKey, message, signature) => {
    // Lengths first, so that no two different (key, message, signature) triples hash the same bytes.
    const lengths = Buffer.alloc(12);
    lengths.writeUInt32BE(publicKey.length, 0);
    lengths.writeUInt32BE(message.length, 4);
    lengths.writeUInt32BE(signature.length, 8);
    // One-shot (no Hash object a verification: native objects are freed in collections' pauses).
    const key = hash('sha256', Buffer.concat([lengths, publicKey, message, signature]), 'base64');
    if (accepted.get(key)) return true;
    const ok = verify(publicKey, message, signature);
    if (ok) accepted.set(key, true);
    return ok;
  };
}
