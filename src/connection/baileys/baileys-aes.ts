import { aes256CbcDecrypt } from '../../domain/aes-cbc.js';
import { aes256GcmDecrypt, aes256GcmEncrypt } from '../../domain/aes-gcm.js';

/**
 * Where Baileys' AES functions look for the daemon's: `patches/` changes lib/Utils/crypto.js so that
 * `aesDecryptWithIV` (and so `aesDecrypt`), `aesEncryptGCM` and `aesDecryptGCM` call the function
 * under their key, with their own arguments, instead of making a createCipheriv/createDecipheriv
 * object. Without the functions they run as upstream.
 */
export const BAILEYS_AES_CBC_KEY = Symbol.for('wa-gateway.aesCbcDecrypt');
export const BAILEYS_AES_GCM_ENCRYPT_KEY = Symbol.for('wa-gateway.aesGcmEncrypt');
export const BAILEYS_AES_GCM_DECRYPT_KEY = Symbol.for('wa-gateway.aesGcmDecrypt');

/**
 * Baileys' AES without a native Cipher or Decipher object a call (domain/aes-cbc.ts, aes-gcm.ts): the
 * same bytes and refusals. CBC decrypts each app-state mutation (~410 for a realistic account's
 * first sync); GCM seals and opens every frame of the Noise transport.
 */
export function installBaileysAes(): void {
  const g = globalThis as Record<symbol, unknown>;
  g[BAILEYS_AES_CBC_KEY] = aes256CbcDecrypt;
  g[BAILEYS_AES_GCM_ENCRYPT_KEY] = aes256GcmEncrypt;
  g[BAILEYS_AES_GCM_DECRYPT_KEY] = aes256GcmDecrypt;
}
