import { hash } from 'node:crypto';
import { requireFromBaileys } from './from-baileys.js';

/** The functions of libsignal's `src/crypto.js` replaced here (its session builder and cipher read them from that object at each call). */
interface LibsignalCrypto {
  calculateMAC(key: Buffer, data: Buffer): Buffer;
  deriveSecrets(input: Buffer, salt: Buffer, info: Buffer, chunks?: number): Buffer[];
  verifyMAC(data: Buffer, key: Buffer, mac: Buffer, length: number): void;
  hash(data: Buffer): Buffer;
}

/** SHA-256's block size, in bytes. */
const BLOCK = 64;

/**
 * HMAC-SHA256 (RFC 2104) as two one-shot hashes: H((K ^ opad) || H((K ^ ipad) || data)).
 *
 * Why not createHmac: each call makes a native Hmac object that the garbage collector frees
 * through a weak-handle callback, run on the main thread in the final pause of a full collection.
 * libsignal makes ~270 of them for each account that pairs (its HKDF and message MACs: six a
 * decrypted message), and while 1,000 phones paired the weak-handle phase was up to 40 ms of a
 * 91 ms pause (`--trace-gc-nvp`, heap.external.weak_global_handles). One-shot `crypto.hash` makes
 * no object; the time per MAC is the same (2.0 against 2.1 µs for 120 bytes, 200,000 of each).
 */
export function hmacSha256(key: Uint8Array, data: Uint8Array): Buffer {
  const k = key.byteLength > BLOCK ? hash('sha256', key, 'buffer') : key;
  const inner = Buffer.allocUnsafe(BLOCK + data.byteLength);
  const outer = Buffer.allocUnsafe(BLOCK + 32);
  for (let i = 0; i < BLOCK; i++) {
    const b = i < k.byteLength ? k[i]! : 0;
    inner[i] = b ^ 0x36;
    outer[i] = b ^ 0x5c;
  }
  inner.set(data, BLOCK);
  outer.set(hash('sha256', inner, 'buffer'), BLOCK);
  return hash('sha256', outer, 'buffer');
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

function sha512(data: Buffer): Buffer {
  assertBuffer(data);
  return hash('sha512', data, 'buffer');
}

/** libsignal's crypto module as Baileys loads it. */
export function libsignalCrypto(): LibsignalCrypto {
  const module = requireFromBaileys('libsignal/src/crypto.js') as Partial<LibsignalCrypto>;
  for (const name of ['calculateMAC', 'deriveSecrets', 'verifyMAC', 'hash'] as const) {
    if (typeof module[name] !== 'function') throw new Error(`libsignal/src/crypto.js has no ${name}`);
  }
  return module as LibsignalCrypto;
}

let installed = false;

/**
 * Puts the object-free MACs in place of libsignal's (createHmac, createHash): the same results and
 * the same errors. Once per process; idempotent.
 */
export function installObjectFreeMacs(): void {
  if (installed) return;
  installed = true;
  const module = libsignalCrypto();
  Object.assign(module, { calculateMAC, deriveSecrets: deriveSecretsWith(module.deriveSecrets.bind(module)), verifyMAC, hash: sha512 });
}
