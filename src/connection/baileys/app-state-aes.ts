import { createDecipheriv } from 'node:crypto';
import { cbc } from '@noble/ciphers/aes.js';

/**
 * Where Baileys' `aesDecryptWithIV` (AES-256-CBC, PKCS#7) looks for the daemon's: `patches/` changes
 * it (lib/Utils/crypto.js) to call the function under this key, `(data, key, iv) => Buffer`, instead
 * of making a createDecipheriv object. Without the function it runs as upstream.
 */
export const BAILEYS_AES_CBC_KEY = Symbol.for('wa-gateway.aesCbcDecrypt');

/**
 * Values up to this size are decrypted in JavaScript; larger ones by Node as before. noble's CBC
 * takes what a Decipheriv does for small values (2.8 against 2.8 µs for 48 bytes, 3.5 against 2.7
 * for 112; 100,000 each) and 3.5 times as long for 1 KiB (14 against 4 µs).
 */
export const JS_CBC_MAX_BYTES = 512;

/**
 * AES-256-CBC decryption with PKCS#7 padding, the bytes and refusals of Node's: a wrong key, a
 * damaged value or a length that is not whole blocks throws.
 *
 * Why not createDecipheriv for each: Baileys decrypts every app-state mutation's value with it
 * (~550 a realistic account's first sync, 29,000 in the first 40 s while 1,000 accounts paired),
 * and each Decipheriv is a native object the garbage collector frees through a weak-handle callback
 * in a full collection's final pause, the same cost domain/hmac.ts removed for the HMACs.
 * noble (@noble/ciphers, audited, no dependencies) makes plain JavaScript objects.
 */
export function aesCbcDecrypt(data: Uint8Array, key: Uint8Array, iv: Uint8Array): Buffer {
  if (data.byteLength > JS_CBC_MAX_BYTES || key.byteLength !== 32 || iv.byteLength !== 16) {
    const decipher = createDecipheriv('aes-256-cbc', key, iv);
    return Buffer.concat([decipher.update(data), decipher.final()]);
  }
  const plain = cbc(key, iv).decrypt(data);
  return Buffer.from(plain.buffer, plain.byteOffset, plain.byteLength);
}

/** Baileys' app-state decryption through aesCbcDecrypt: the same bytes, no native object each. */
export function installBaileysAes(): void {
  (globalThis as Record<symbol, unknown>)[BAILEYS_AES_CBC_KEY] = aesCbcDecrypt;
}
