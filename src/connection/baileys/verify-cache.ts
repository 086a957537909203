import { createHash } from 'node:crypto';
import { Curve } from '@whiskeysockets/baileys';
import { BoundedMap } from './lru.js';

let installed = false;

/**
 * Remembers the results of Baileys' `Curve.verify` (lib/Utils/crypto.js) for the exact inputs it
 * has seen. Baileys checks the server's Noise certificate chain at every login
 * (`processHandshake`, lib/Utils/noise-handler.js): two signatures, each checked in pure
 * JavaScript (libsignal's curve25519), about 6 ms of CPU apiece, for a chain that is the same for
 * every connection to a server. Measured on a thousand sessions logging in after a restart, that was
 * a quarter of the daemon's CPU. A signature check is a pure function of its inputs, so answering a
 * repeat from memory changes nothing but the time; inputs never seen (pairing, another server's
 * chain) are checked as before. Installed once per process; bounded.
 */
export function memoizeCurveVerify(capacity = 256): void {
  if (installed) return;
  installed = true;
  const verify = Curve.verify;
  const results = new BoundedMap<string, boolean>(capacity);
  Curve.verify = (pubKey, message, signature) => {
    const lengths = Buffer.alloc(12);
    lengths.writeUInt32BE(pubKey.length, 0);
    lengths.writeUInt32BE(message.length, 4);
    lengths.writeUInt32BE(signature.length, 8);
    const key = createHash('sha256').update(lengths).update(pubKey).update(message).update(signature).digest('base64');
    const known = results.get(key);
    if (known !== undefined) return known;
    const ok = verify(pubKey, message, signature);
    results.set(key, ok);
    return ok;
  };
}
