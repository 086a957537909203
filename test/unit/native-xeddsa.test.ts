import test from 'ava';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { installNativeXEdDSA, nativeXEdDSAVerify } from '../../src/connection/baileys/native-xeddsa.js';
import { verifyXEdDSA } from '../../src/connection/baileys/xeddsa.js';

// Issue 26 item 3 (no stall while phones pair): libsignal's XEdDSA checks run on Node's OpenSSL
// instead of curve25519-js (6 to 10 ms of JavaScript per signature). The rule: the native check
// answers exactly what curve25519-js answers, for signatures libsignal makes and for bad ones.

interface CurveJs {
  verify(k: Uint8Array, m: Uint8Array, s: Uint8Array): boolean;
  sign(secret: Uint8Array, m: Uint8Array, random?: Uint8Array): Uint8Array;
  generateKeyPair(seed: Uint8Array): { public: Uint8Array; private: Uint8Array };
}
const fromBaileys = createRequire(import.meta.resolve('@whiskeysockets/baileys'));
const curveJs = createRequire(fromBaileys.resolve('libsignal/src/curve.js'))('curve25519-js') as CurveJs;
// Taken before anything installs the native one (each test file runs in its own process).
const javascriptVerify = curveJs.verify.bind(curveJs);

// libsignal-protocol-c's test vector (tests/test_curve25519.c), signed by libsignal's C XEdDSA.
const ALICE_IDENTITY = Buffer.from('ab7e717d4a163b7d9a1d8071dfe9dcf8cdcd1cea3339b6356be84d887e322c64', 'hex');
const ALICE_MESSAGE = Buffer.from('05edce9d9c415ca78cb7252e72c2c4a554d3eb29485a0e1d503118d1a82d99fb4a', 'hex');
const ALICE_SIGNATURE = Buffer.from('5de88ca9a89b4a115da79109c67c9c7464a3e4180274f1cb8c63c2984e286dfbede82deb9dcd9fae0bfbb821569b3d9001bd8130cd11d486cef047bd60b86e88', 'hex');

test('native XEdDSA accepts libsignal\'s C known-answer signature and refuses it with any bit of it flipped', (t) => {
  t.true(nativeXEdDSAVerify(ALICE_IDENTITY, ALICE_MESSAGE, ALICE_SIGNATURE));
  for (let i = 0; i < 64; i++) {
    for (const bit of [0x01, 0x80]) {
      const changed = Buffer.from(ALICE_SIGNATURE);
      changed[i]! ^= bit;
      t.false(nativeXEdDSAVerify(ALICE_IDENTITY, ALICE_MESSAGE, changed), `byte ${i} ^ ${bit}`);
    }
  }
});

test('native XEdDSA answers as curve25519-js does: 120 keys signing random messages, the same tampered, and random bytes', (t) => {
  let agreed = 0;
  for (let i = 0; i < 120; i++) {
    const pair = curveJs.generateKeyPair(randomBytes(32));
    const message = randomBytes(1 + (i % 200));
    const signature = curveJs.sign(pair.private, message, randomBytes(64));
    const cases: Array<[Uint8Array, Uint8Array, Uint8Array, boolean | null]> = [
      [pair.public, message, signature, true],
      [pair.public, Buffer.concat([message, Buffer.of(1)]), signature, false],
      [randomBytes(32), message, signature, false],
      [pair.public, message, Uint8Array.from(signature, (b, j) => (j === i % 64 ? b ^ 0x10 : b)), false],
      [randomBytes(32), randomBytes(40), randomBytes(64), null],
    ];
    for (const [k, m, s, expected] of cases) {
      const native = nativeXEdDSAVerify(k, m, s);
      const javascript = javascriptVerify(k, m, s);
      t.is(native, javascript, `case ${i}`);
      if (expected !== null) t.is(native, expected, `case ${i}`);
      agreed += 1;
    }
  }
  t.is(agreed, 600);
});

test('malformed input is refused as curve25519-js refuses it (it throws; libsignal passes that on)', (t) => {
  t.throws(() => nativeXEdDSAVerify(ALICE_IDENTITY, ALICE_MESSAGE, ALICE_SIGNATURE.subarray(0, 63)), { message: 'wrong signature length' });
  t.throws(() => nativeXEdDSAVerify(ALICE_IDENTITY.subarray(1), ALICE_MESSAGE, ALICE_SIGNATURE), { message: 'wrong public key length' });
  t.throws(() => javascriptVerify(ALICE_IDENTITY, ALICE_MESSAGE, ALICE_SIGNATURE.subarray(0, 63)), { message: 'wrong signature length' });
});

test('installed, libsignal\'s verifySignature (and the gateway\'s certificate check on it) goes through the native check', (t) => {
  installNativeXEdDSA();
  t.is(curveJs.verify, nativeXEdDSAVerify);
  t.true(verifyXEdDSA(ALICE_IDENTITY, ALICE_MESSAGE, ALICE_SIGNATURE));
  const flipped = Buffer.from(ALICE_SIGNATURE);
  flipped[5]! ^= 1;
  t.false(verifyXEdDSA(ALICE_IDENTITY, ALICE_MESSAGE, flipped));
  // The time: the whole point (a figure, not a bound: timings are the bench's job).
  const started = process.hrtime.bigint();
  for (let i = 0; i < 200; i++) nativeXEdDSAVerify(ALICE_IDENTITY, ALICE_MESSAGE, ALICE_SIGNATURE);
  const nativeUs = Number(process.hrtime.bigint() - started) / 1000 / 200;
  const js0 = process.hrtime.bigint();
  for (let i = 0; i < 5; i++) javascriptVerify(ALICE_IDENTITY, ALICE_MESSAGE, ALICE_SIGNATURE);
  const jsUs = Number(process.hrtime.bigint() - js0) / 1000 / 5;
  t.log(`per signature: native ${nativeUs.toFixed(0)} µs, curve25519-js ${jsUs.toFixed(0)} µs`);
});
