import { aes256CbcDecrypt } from '../../domain/aes-cbc.js';

/**
 * Where Baileys' `aesDecryptWithIV` (and so `aesDecrypt`) looks for the daemon's AES-256-CBC
 * decryption: `patches/` changes it (lib/Utils/crypto.js) to call the function under this key,
 * `(data, key, iv) => Buffer`, instead of making a createDecipheriv object. Without the function it
 * runs as upstream.
 */
export const BAILEYS_AES_CBC_KEY = Symbol.for('wa-gateway.aesCbcDecrypt');

/**
 * Baileys' AES-256-CBC decryption without a native Decipher object a call (domain/aes-cbc.ts): the
 * same bytes and refusals. Its app-state decoding decrypts each mutation, ~410 for a realistic
 * account's first sync.
 */
export function installBaileysAesCbc(): void {
  (globalThis as Record<symbol, unknown>)[BAILEYS_AES_CBC_KEY] = aes256CbcDecrypt;
}
