import { createHmac, hash } from 'node:crypto';

/** The block size, in bytes, of the hashes HMAC'd here without an object (others go to createHmac). */
const BLOCK: Readonly<Record<string, number>> = { sha256: 64, sha512: 128 };

/**
 * HMAC (RFC 2104) as two one-shot hashes: H((K ^ opad) || H((K ^ ipad) || data)), for SHA-256 and
 * SHA-512; any other hash, or a key or data that is not bytes, goes to createHmac as before.
 *
 * Why not createHmac: each call makes a native Hmac object that the garbage collector frees through
 * a weak-handle callback, run on the main thread in the final pause of a full collection. While
 * 1,000 phones paired, that phase (`heap.external.weak_global_handles` in --trace-gc-nvp) was up to
 * 40 ms of a 91 ms pause with libsignal's MACs as they were (libsignal-crypto.ts), and still 13 to 28
 * ms of each full collection's 36 to 58 ms with Baileys' app-state MACs (two a mutation, ~550
 * mutations an account: app-state-hmac.ts). One-shot `crypto.hash` makes no object; the time per
 * MAC is the same (2.0 against 2.1 µs for 120 bytes, 200,000 of each).
 */
export function hmac(algorithm: string, key: unknown, data: unknown): Buffer {
  const block = BLOCK[algorithm];
  if (block === undefined || !(key instanceof Uint8Array) || !(data instanceof Uint8Array)) {
    return createHmac(algorithm, key as Uint8Array).update(data as Uint8Array).digest();
  }
  const k = key.byteLength > block ? hash(algorithm, key, 'buffer') : key;
  const inner = Buffer.allocUnsafe(block + data.byteLength);
  const outer = Buffer.allocUnsafe(block + (algorithm === 'sha256' ? 32 : 64));
  for (let i = 0; i < block; i++) {
    const b = i < k.byteLength ? k[i]! : 0;
    inner[i] = b ^ 0x36;
    outer[i] = b ^ 0x5c;
  }
  inner.set(data, block);
  outer.set(hash(algorithm, inner, 'buffer'), block);
  const mac = hash(algorithm, outer, 'buffer');
  // The padded keys may sit in Buffer's shared pool: not left there for whoever reads it next.
  inner.fill(0, 0, block);
  outer.fill(0, 0, block);
  return mac;
}
