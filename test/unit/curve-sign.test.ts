/**
 * Pairing without stalls (issue 26 item 3): the daemon signs with @noble/curves instead of
 * curve25519-js (src/connection/baileys/curve-sign.ts). A signature must be exactly what libsignal
 * made before (its signing is deterministic), and must verify where libsignal verifies; the swap
 * must reach libsignal's own `calculateSignature`, which Baileys calls.
 */
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import test from 'ava';
import { curve25519Sign, installCurveSign } from '../../src/connection/baileys/curve-sign.js';

interface LibsignalCurve {
  generateKeyPair(): { pubKey: Buffer; privKey: Buffer };
  calculateSignature(privKey: Buffer, message: Buffer): Buffer;
  verifySignature(pubKey: Buffer, message: Buffer, signature: Buffer): boolean;
}
interface CurveJs {
  sign(secretKey: Uint8Array, message: Uint8Array, random?: Uint8Array): Uint8Array;
}

const fromLibsignal = createRequire(createRequire(import.meta.url).resolve('libsignal/src/curve.js'));
const libsignal = fromLibsignal('./curve.js') as LibsignalCurve;
const curveJs = fromLibsignal('curve25519-js') as CurveJs;
// The original, before any install (the unit tests share nothing with other files' processes).
const original = curveJs.sign.bind(curveJs);

test('the same signature bytes as curve25519-js for 300 random keys and messages, accepted by libsignal, refused for another message', (t) => {
  for (let i = 0; i < 300; i++) {
    const { pubKey, privKey } = libsignal.generateKeyPair();
    const message = randomBytes(1 + ((i * 37) % 400));
    const ours = Buffer.from(curve25519Sign(privKey, message));
    t.deepEqual(ours, Buffer.from(original(privKey, message)), `key ${i}`);
    t.true(libsignal.verifySignature(pubKey, message, ours), `verifies ${i}`);
    const other = Buffer.from(message);
    other[0] = other[0]! ^ 1;
    // libsignal throws (or answers false) on a bad signature.
    let verified: boolean;
    try {
      verified = libsignal.verifySignature(pubKey, other, ours);
    } catch {
      verified = false;
    }
    t.false(verified, `another message ${i}`);
  }
});

test('installed, it is what libsignal signs with (and a call with a random suffix keeps the original)', (t) => {
  installCurveSign();
  installCurveSign();
  const { pubKey, privKey } = libsignal.generateKeyPair();
  const message = randomBytes(33);
  const signature = libsignal.calculateSignature(privKey, message);
  t.deepEqual(Buffer.from(signature), Buffer.from(curve25519Sign(privKey, message)));
  t.true(libsignal.verifySignature(pubKey, message, signature));
  const random = randomBytes(64);
  t.deepEqual(Buffer.from(curveJs.sign(privKey, message, random)), Buffer.from(original(privKey, message, random)));
});

test('a private key of another length is refused, as libsignal refuses it', (t) => {
  t.throws(() => curve25519Sign(new Uint8Array(31), new Uint8Array(1)), { message: /Invalid private key/ });
});
