import { hmac } from '../../domain/hmac.js';

/**
 * Where Baileys' `hmacSign` looks for the daemon's HMAC: `patches/` changes it (lib/Utils/crypto.js)
 * to call the function under this key, `(algorithm, key, data) => Buffer`, instead of making a
 * createHmac object. Without the function it runs as upstream.
 */
export const BAILEYS_HMAC_KEY = Symbol.for('wa-gateway.hmacSign');

/**
 * Baileys' HMACs without a native object each (domain/hmac.ts): the same bytes. Its app-state decoding
 * makes two a mutation (the value MAC, SHA-512, and the index MAC), ~1,100 for a realistic account's
 * first sync; its pairing, media keys and pairing codes a few more.
 */
export function installBaileysHmac(): void {
  (globalThis as Record<symbol, unknown>)[BAILEYS_HMAC_KEY] = hmac;
}
