import { createDecipheriv, type Decipher } from 'node:crypto';
import { BoundedMap } from './bounded-map.js';

const BLOCK = 16;
/** Keys whose block decipher is kept (least recently used goes first). */
const KEPT_KEYS = 64;

const blockDeciphers = new BoundedMap<string, Decipher>(KEPT_KEYS);

const keyId = (key: Uint8Array): string => Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('latin1');

/**
 * An AES-256 block decipher for `key` (ECB, no padding), kept for the next call with the same key.
 * ECB carries nothing from one block to the next, so a decipher fed whole blocks only (never
 * `final()`) deciphers any number of messages in turn.
 */
function blockDecipher(id: string, key: Uint8Array): Decipher {
  let decipher = blockDeciphers.get(id);
  if (!decipher) {
    decipher = createDecipheriv('aes-256-ecb', key, null).setAutoPadding(false);
    blockDeciphers.set(id, decipher);
  }
  return decipher;
}

/**
 * AES-256-CBC decryption with PKCS#7 padding: `createDecipheriv('aes-256-cbc', key, iv)`'s bytes, and
 * the same refusals (a key that is not 32 bytes, an IV that is not 16, a length that is not a whole
 * number of blocks, a bad padding), without a native Decipher object a call.
 *
 * Why: each Decipher is freed by a weak-handle callback that runs on the main thread in a garbage
 * collection's pause. A realistic account's first app-state sync decrypts ~410 mutations (Baileys'
 * `aesDecrypt`, one Decipher each): while 1,000 phones paired that was ~60 % of the ~1,600 native
 * objects made a pairing (counted by wrapping node:crypto's makers), and the weak-handle phase
 * (`heap.external.weak_global_handles` in --trace-gc-nvp) was 19 to 27 ms of the longest full
 * collections' 41 to 66 ms pauses. Here one block decipher is kept a key (ECB: each block
 * deciphered alone), and the chaining (each block XOR the one before, the IV for the first) and the
 * padding are done in JavaScript; no AES is written by hand.
 */
export function aes256CbcDecrypt(data: Uint8Array, key: Uint8Array, iv: Uint8Array): Buffer {
  if (key.byteLength !== 32) throw new RangeError('Invalid key length');
  if (iv.byteLength !== BLOCK) throw new RangeError('Invalid initialization vector');
  // A partial block would stay inside the kept decipher and corrupt the next message: refused first.
  if (data.byteLength === 0 || data.byteLength % BLOCK !== 0) throw new Error('wrong final block length');
  const id = keyId(key);
  const out = blockDecipher(id, key).update(data);
  if (out.byteLength !== data.byteLength) {
    // Not expected from OpenSSL; if it ever happens, that decipher is not trusted again.
    blockDeciphers.delete(id);
    throw new Error('bad decrypt');
  }
  for (let i = 0; i < BLOCK; i++) out[i]! ^= iv[i]!;
  for (let i = BLOCK; i < out.byteLength; i++) out[i]! ^= data[i - BLOCK]!;
  const pad = out[out.byteLength - 1]!;
  let bad = pad < 1 || pad > BLOCK ? 1 : 0;
  for (let i = out.byteLength - Math.min(Math.max(pad, 1), BLOCK); i < out.byteLength; i++) bad |= out[i]! ^ pad;
  if (bad !== 0) {
    out.fill(0);
    throw new Error('bad decrypt');
  }
  return out.subarray(0, out.byteLength - pad);
}
