import { hash } from 'node:crypto';
import { requireFromBaileys } from './from-baileys.js';
import { hmac } from '../../domain/hmac.js';
import { aes256CbcDecrypt } from '../../domain/aes-cbc.js';

/** The functions of libsignal's `src/crypto.js` replaced here (its session builder and cipher read them from that object at each call). */
export interface LibsignalCrypto {
  calculateMAC(key: Buffer, data: Buffer): Buffer;
  deriveSecrets(input: Buffer, salt: Buffer, info: Buffer, chunks?: number): Buffer[];
  verifyMAC(data: Buffer, key: Buffer, mac: Buffer, length: number): void;
  hash(data: Buffer): Buffer;
  decrypt(key: Buffer, data: Buffer, iv: Buffer): Buffer;
}

/**
 * HMAC-SHA256 without a native object (domain/hmac.ts): libsignal made ~270 Hmac objects for each account
 * that pairs (its HKDF and message MACs: six a decrypted message).
 */
export function hmacSha256(key: Uint8Array, data: Uint8Array): Buffer {
  return hmac('sha256', key, data);
}

function assertBuffer(value: unknown): Buffer {
  // As libsignal's: null or undefined fails reading `constructor` (a TypeError too).
  if (!(value instanceof Buffer)) throw TypeError(`Expected Buffer instead of: ${(value as { constructor: { name: string } }).constructor.name}`);
  return value;
}

/** libsignal's calculateMAC, checks and result alike (a Buffer of 32 bytes). */
function calculateMAC(key: Buffer, data: Buffer): Buffer {
  assertBuffer(key);
  assertBuffer(data);
  return hmacSha256(key, data);
}

/**
 * libsignal's deriveSecrets (RFC 5869 with a 32-byte salt, the first one to three 32-byte blocks),
 * line for line. A chunk count out of range goes to libsignal's own function, which refuses it
 * with its assert() (whose message differs between Node 20 and 24: the same refusal either way).
 */
function deriveSecretsWith(original: LibsignalCrypto['deriveSecrets']): LibsignalCrypto['deriveSecrets'] {
  return (input, salt, info, chunks) => {
    assertBuffer(input);
    assertBuffer(salt);
    assertBuffer(info);
    if (salt.byteLength != 32) throw new Error('Got salt of incorrect length');
    const n = chunks || 3;
    if (!(n >= 1 && n <= 3)) return original(input, salt, info, chunks);
    const prk = calculateMAC(salt, input);
    const infoArray = new Uint8Array(info.byteLength + 1 + 32);
    infoArray.set(info, 32);
    infoArray[infoArray.length - 1] = 1;
    const signed = [calculateMAC(prk, Buffer.from(infoArray.slice(32)))];
    for (let i = 2; i <= n; i++) {
      infoArray.set(signed[signed.length - 1]!);
      infoArray[infoArray.length - 1] = i;
      signed.push(calculateMAC(prk, Buffer.from(infoArray)));
    }
    return signed;
  };
}

function verifyMAC(data: Buffer, key: Buffer, mac: Buffer, length: number): void {
  const calculated = calculateMAC(key, data).slice(0, length);
  if (mac.length !== length || calculated.length !== length) throw new Error('Bad MAC length');
  if (!mac.equals(calculated)) throw new Error('Bad MAC');
}

/**
 * libsignal's decrypt (AES-256-CBC, PKCS#7), checks alike, without a Decipher object a message
 * (domain/aes-cbc.ts): one a message received, ~12 while an account pairs.
 */
function decrypt(key: Buffer, data: Buffer, iv: Buffer): Buffer {
  assertBuffer(key);
  assertBuffer(data);
  assertBuffer(iv);
  return aes256CbcDecrypt(data, key, iv);
}

function sha512(data: Buffer): Buffer {
  assertBuffer(data);
  return hash('sha512', data, 'buffer');
}

/** libsignal's crypto module as Baileys loads it. */
export function libsignalCrypto(): LibsignalCrypto {
  const module = requireFromBaileys('libsignal/src/crypto.js') as Partial<LibsignalCrypto>;
  for (const name of ['calculateMAC', 'deriveSecrets', 'verifyMAC', 'hash', 'decrypt'] as const) {
    if (typeof module[name] !== 'function') throw new Error(`libsignal/src/crypto.js has no ${name}`);
  }
  return module as LibsignalCrypto;
}

let installed = false;

/**
 * Puts the object-free MACs, hash and decryption in place of libsignal's (createHmac, createHash,
 * createDecipheriv): the same results and the same errors. Once per process; idempotent.
 */
export function installObjectFreeCrypto(): void {
  if (installed) return;
  installed = true;
  const module = libsignalCrypto();
  Object.assign(module, { calculateMAC, deriveSecrets: deriveSecretsWith(module.deriveSecrets.bind(module)), verifyMAC, hash: sha512, decrypt });
}
