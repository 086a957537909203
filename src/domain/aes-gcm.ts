import { createCipheriv, createDecipheriv, timingSafeEqual, type Cipher } from 'node:crypto';

/**
 * AES-256-GCM with a 12-byte IV and a 16-byte tag (NIST SP 800-38D) without a native Cipher object a
 * message: `createCipheriv('aes-256-gcm', key, iv)`'s bytes, and its refusal of a tag that does not
 * match (the plaintext is never returned then). Other IV lengths, keys that are not 32 bytes,
 * additional data that is not bytes and messages over 1 KiB go to createCipheriv as before.
 *
 * Why: each Cipher/Decipher is freed by a weak-handle callback on the main thread in a garbage
 * collection's pause, and most of them are promoted before they die, so a full collection's final
 * pause frees thousands at once (`heap.external.weak_global_handles` in --trace-gc-nvp: 19 to 56 ms
 * of the longest 41 to 95 ms pauses while 1,000 phones paired). Every frame of every WhatsApp
 * connection is one (Baileys' Noise transport), and they were ~45 % of the native objects that
 * lived long enough to be promoted (lifetimes counted with a FinalizationRegistry on node:crypto's
 * makers, 200 accounts pairing while one sent 50 messages a second).
 *
 * How: the AES block cipher stays OpenSSL's (one ECB Cipher kept per key, as long as the key's Buffer
 * lives); the counter mode (the keystream is that cipher over the counter blocks, one call a
 * message) and GHASH (multiplication in GF(2^128) with Shoup's 4-bit tables, 256 bytes a key) are
 * written here, checked against Node's GCM on random inputs by test/unit/aes-gcm.test.ts. Tags are
 * compared in constant time.
 *
 * Messages over 1 KiB go to Node's GCM too: GHASH in JavaScript costs ~0.3 µs a block, so 100 bytes
 * take 6.2 to 8.3 µs (open, seal) against Node's 5.7, but 1 KiB 20 to 31 against 5.9 µs and 64 KiB
 * would take 2.0 ms against 89 µs (`node --import=tsx bench/aes-gcm.ts`, Node 20, this machine).
 * Nearly every frame is small (a message, a receipt, an IQ); the few large ones keep their native
 * object.
 */
const LARGEST = 1024;

interface KeyState {
  /** The key's bytes when the state was made: a Buffer changed in place gets a new state. */
  key: Buffer;
  /** AES-256 in ECB mode without padding: E_K over whole blocks. */
  ecb: Cipher;
  /** Multiples of H = E_K(0^128) by the 16 4-bit values, 4 words each, big-endian words. */
  table: Uint32Array;
}

const states = new WeakMap<Uint8Array, KeyState>();

/** GCM's reduction constants for the 4-bit shifts (the R polynomial's bits, as in Shoup's method). */
const LAST4 = [0x0000, 0x1c20, 0x3840, 0x2460, 0x7080, 0x6ca0, 0x48c0, 0x54e0, 0xe100, 0xfd20, 0xd940, 0xc560, 0x9180, 0x8da0, 0xa9c0, 0xb5e0];

function stateFor(key: Uint8Array): KeyState {
  const known = states.get(key);
  if (known && known.key.equals(key)) return known;
  const ecb = createCipheriv('aes-256-ecb', key, null).setAutoPadding(false);
  const h = ecb.update(Buffer.alloc(16));
  const state: KeyState = { key: Buffer.from(key), ecb, table: hashTable(h) };
  h.fill(0);
  states.set(key, state);
  return state;
}

/** Shoup's table: table[i] = i * H in GCM's bit order (mbed TLS's gcm_gen_table, in 32-bit words). */
function hashTable(h: Buffer): Uint32Array {
  const t = new Uint32Array(64);
  let v0 = h.readUInt32BE(0);
  let v1 = h.readUInt32BE(4);
  let v2 = h.readUInt32BE(8);
  let v3 = h.readUInt32BE(12);
  t.set([v0, v1, v2, v3], 8 * 4);
  for (let i = 4; i > 0; i >>= 1) {
    const carry = v3 & 1 ? 0xe1000000 : 0;
    v3 = (v3 >>> 1) | (v2 << 31);
    v2 = (v2 >>> 1) | (v1 << 31);
    v1 = (v1 >>> 1) | (v0 << 31);
    v0 = (v0 >>> 1) ^ carry;
    t.set([v0, v1, v2, v3], i * 4);
  }
  for (let i = 2; i <= 8; i *= 2) {
    for (let j = 1; j < i; j++) {
      for (let w = 0; w < 4; w++) t[(i + j) * 4 + w] = t[i * 4 + w]! ^ t[j * 4 + w]!;
    }
  }
  return t;
}

/** GHASH's running value, four big-endian words. */
type Acc = Uint32Array;

/** Big-endian word `w` (0..3) of the 16-byte block of `data` at `at`, zeros past the data's end. */
function word(data: Uint8Array, at: number, w: number): number {
  const i = at + w * 4;
  if (i + 4 <= data.byteLength) return ((data[i]! << 24) | (data[i + 1]! << 16) | (data[i + 2]! << 8) | data[i + 3]!) >>> 0;
  let v = 0;
  for (let k = 0; k < 4; k++) v = (v << 8) | (i + k < data.byteLength ? data[i + k]! : 0);
  return v >>> 0;
}

/** acc = (acc ^ block) * H, the block being 16 bytes of `data` from `at` (zeros past its end). */
function ghashBlock(acc: Acc, table: Uint32Array, data: Uint8Array, at: number): void {
  const x0 = acc[0]! ^ word(data, at, 0);
  const x1 = acc[1]! ^ word(data, at, 1);
  const x2 = acc[2]! ^ word(data, at, 2);
  const x3 = acc[3]! ^ word(data, at, 3);
  let z0 = 0;
  let z1 = 0;
  let z2 = 0;
  let z3 = 0;
  // Byte 15 down to byte 0, low nibble then high nibble (mbed TLS's gcm_mult), with one shift by 4
  // bits and reduction before each nibble but the first.
  for (let i = 15; i >= 0; i--) {
    const xw = i < 4 ? x0 : i < 8 ? x1 : i < 12 ? x2 : x3;
    const byte = (xw >>> (24 - 8 * (i & 3))) & 0xff;
    for (let half = 0; half < 2; half++) {
      const nibble = half === 0 ? byte & 0xf : byte >>> 4;
      if (i !== 15 || half === 1) {
        const rem = z3 & 0xf;
        z3 = (z3 >>> 4) | (z2 << 28);
        z2 = (z2 >>> 4) | (z1 << 28);
        z1 = (z1 >>> 4) | (z0 << 28);
        z0 = (z0 >>> 4) ^ (LAST4[rem]! << 16);
      }
      z0 ^= table[nibble * 4]!;
      z1 ^= table[nibble * 4 + 1]!;
      z2 ^= table[nibble * 4 + 2]!;
      z3 ^= table[nibble * 4 + 3]!;
    }
  }
  acc[0] = z0;
  acc[1] = z1;
  acc[2] = z2;
  acc[3] = z3;
}

/** GHASH_H(A || pad || C || pad || len(A) || len(C)) as 16 bytes. */
function ghash(table: Uint32Array, aad: Uint8Array, data: Uint8Array): Buffer {
  const acc: Acc = new Uint32Array(4);
  for (let at = 0; at < aad.byteLength; at += 16) ghashBlock(acc, table, aad, at);
  for (let at = 0; at < data.byteLength; at += 16) ghashBlock(acc, table, data, at);
  const lengths = Buffer.alloc(16);
  // Lengths in bits, 64-bit big-endian; messages here stay far below 2^53 bits.
  lengths.writeUIntBE(aad.byteLength * 8, 2, 6);
  lengths.writeUIntBE(data.byteLength * 8, 10, 6);
  ghashBlock(acc, table, lengths, 0);
  const out = Buffer.allocUnsafe(16);
  for (let w = 0; w < 4; w++) out.writeUInt32BE(acc[w]!, w * 4);
  return out;
}

/**
 * E_K(J0) followed by the keystream for `length` bytes: the ECB cipher over J0, inc32(J0), ... in one
 * call (J0 = IV || 0^31 || 1 for a 12-byte IV).
 */
function counterBlocks(state: KeyState, iv: Uint8Array, length: number): Buffer {
  const blocks = 1 + Math.ceil(length / 16);
  const counters = Buffer.allocUnsafe(blocks * 16);
  for (let b = 0; b < blocks; b++) {
    counters.set(iv, b * 16);
    counters.writeUInt32BE((1 + b) >>> 0, b * 16 + 12);
  }
  const stream = state.ecb.update(counters);
  if (stream.byteLength !== counters.byteLength) throw new Error('the AES block cipher returned a partial block');
  return stream;
}

function usable(key: Uint8Array, iv: Uint8Array, aad: unknown, length: number): aad is Uint8Array {
  return key instanceof Uint8Array && key.byteLength === 32 && iv instanceof Uint8Array && iv.byteLength === 12 && aad instanceof Uint8Array && aad.byteLength <= LARGEST && length <= LARGEST;
}

/** ciphertext || tag, as Baileys' aesEncryptGCM. */
export function aes256GcmEncrypt(plaintext: Uint8Array, key: Uint8Array, iv: Uint8Array, aad: Uint8Array): Buffer {
  if (!(plaintext instanceof Uint8Array) || !usable(key, iv, aad, plaintext.byteLength)) {
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(aad);
    return Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  }
  const state = stateFor(key);
  const stream = counterBlocks(state, iv, plaintext.byteLength);
  const out = Buffer.allocUnsafe(plaintext.byteLength + 16);
  for (let i = 0; i < plaintext.byteLength; i++) out[i] = plaintext[i]! ^ stream[16 + i]!;
  const s = ghash(state.table, aad, out.subarray(0, plaintext.byteLength));
  for (let i = 0; i < 16; i++) out[plaintext.byteLength + i] = s[i]! ^ stream[i]!;
  stream.fill(0);
  return out;
}

/** The plaintext of ciphertext || tag, as Baileys' aesDecryptGCM; throws when the tag does not match. */
export function aes256GcmDecrypt(sealed: Uint8Array, key: Uint8Array, iv: Uint8Array, aad: Uint8Array): Buffer {
  if (!(sealed instanceof Uint8Array) || sealed.byteLength < 16 || !usable(key, iv, aad, sealed.byteLength - 16)) {
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    const enc = sealed.slice(0, sealed.length - 16);
    decipher.setAAD(aad);
    decipher.setAuthTag(sealed.slice(sealed.length - 16));
    return Buffer.concat([decipher.update(enc), decipher.final()]);
  }
  const length = sealed.byteLength - 16;
  const ciphertext = sealed.subarray(0, length);
  const state = stateFor(key);
  const stream = counterBlocks(state, iv, length);
  const s = ghash(state.table, aad, ciphertext);
  for (let i = 0; i < 16; i++) s[i]! ^= stream[i]!;
  if (!timingSafeEqual(s, sealed.subarray(length))) {
    stream.fill(0);
    throw new Error('Unsupported state or unable to authenticate data');
  }
  const out = Buffer.allocUnsafe(length);
  for (let i = 0; i < length; i++) out[i] = ciphertext[i]! ^ stream[16 + i]!;
  stream.fill(0);
  return out;
}
