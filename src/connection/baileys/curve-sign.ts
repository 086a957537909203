import { hash } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToNumberLE, numberToBytesLE } from '@noble/curves/utils.js';
import { libsignalCurveJs } from './libsignal-curve-js.js';

/**
 * Signal's Curve25519 signature (libsignal's `calculateSignature`: the Montgomery private key as an
 * Ed25519 scalar, its public key's sign bit carried in the signature's last byte), computed with
 * @noble/curves' precomputed base-point tables instead of curve25519-js's TweetNaCl arithmetic.
 *
 * Why: Baileys signs twice while a phone pairs (the signed pre-key, the device identity), on the
 * main thread, through libsignal, which calls curve25519-js: 6 ms a signature alone, ~15 ms in the
 * pairing profile (4 % of the daemon's CPU while 500 phones paired, and stalls of every other
 * instance of up to a few hundred ms when signatures pile up in one turn). This one takes 0.53 ms
 * (`node --import=tsx bench/curve-sign.ts`: 6.04 against 0.531 ms, median of 4 rounds of 50).
 *
 * The output is the very bytes curve25519-js gives for the same key and message (its `sign`
 * without a random suffix is deterministic: r = SHA-512(a || message)); the test compares them
 * and checks libsignal's verification. Node's own Ed25519 cannot do this: it derives the scalar
 * from a seed, where Signal signs with the X25519 scalar itself.
 */
const L = ed25519.Point.Fn.ORDER;
const BASE = ed25519.Point.BASE;

// One-shot hash (no Hash object: each is a native object freed in a collection's pause; domain/hmac.ts).
const sha512 = (...parts: Uint8Array[]): Uint8Array => hash('sha512', parts.length === 1 ? parts[0]! : Buffer.concat(parts), 'buffer');

export function curve25519Sign(privateKey: Uint8Array, message: Uint8Array): Uint8Array {
  if (privateKey.length !== 32) throw new Error('Invalid private key');
  const a = Uint8Array.from(privateKey);
  a[0]! &= 248;
  a[31]! &= 127;
  a[31]! |= 64;
  const scalar = bytesToNumberLE(a) % L;
  const publicKey = BASE.multiply(scalar).toBytes();
  const signBit = publicKey[31]! & 128;
  const r = bytesToNumberLE(sha512(a, message)) % L;
  const R = BASE.multiply(r).toBytes();
  const h = bytesToNumberLE(sha512(R, publicKey, message)) % L;
  const s = (r + h * scalar) % L;
  const signature = new Uint8Array(64);
  signature.set(R, 0);
  signature.set(numberToBytesLE(s, 32), 32);
  signature[63]! |= signBit;
  return signature;
}

let installed = false;

/**
 * Puts curve25519Sign in place of curve25519-js's `sign` for every caller in this process
 * (libsignal reads `curveJs.sign` at each call, from the one copy of the module). A call with a
 * random suffix (nobody here makes one) goes to the original.
 */
export function installCurveSign(): void {
  if (installed) return;
  installed = true;
  const curveJs = libsignalCurveJs();
  const original = curveJs.sign.bind(curveJs);
  curveJs.sign = (secretKey, message, random) => (random === undefined ? curve25519Sign(secretKey, message) : original(secretKey, message, random));
}
