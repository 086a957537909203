import test from 'ava';
import { Curve } from '@whiskeysockets/baileys';
import { installCurveVerify } from '../../src/connection/baileys/curve-verify.js';
import { memoizeVerify, type VerifySignature } from '../../src/connection/baileys/verify-cache.js';
import { verifyXEdDSA } from '../../src/connection/baileys/xeddsa.js';

// Issue 21 item 2: Baileys rc14's Curve.verify accepted any well-formed signature, so WhatsApp's
// certificate chain was not really checked. The gateway's XEdDSA check (xeddsa.ts), its cache of
// accepted inputs (verify-cache.ts) and their installation into Baileys (curve-verify.ts).

// libsignal-protocol-c's test vector (tests/test_curve25519.c, test_curve25519_signature): Alice's
// identity key signs her ephemeral public key (33 bytes, type byte included). Signed by libsignal's
// C XEdDSA, not by the JavaScript that checks it here.
const ALICE_IDENTITY_PUBLIC = Buffer.from('05ab7e717d4a163b7d9a1d8071dfe9dcf8cdcd1cea3339b6356be84d887e322c64', 'hex');
const ALICE_EPHEMERAL_PUBLIC = Buffer.from('05edce9d9c415ca78cb7252e72c2c4a554d3eb29485a0e1d503118d1a82d99fb4a', 'hex');
const ALICE_SIGNATURE = Buffer.from(
  '5de88ca9a89b4a115da79109c67c9c7464a3e4180274f1cb8c63c2984e286dfbede82deb9dcd9fae0bfbb821569b3d9001bd8130cd11d486cef047bd60b86e88',
  'hex',
);

test('accepts libsignal\'s known-answer signature, with the key in either form (33 bytes with the type byte, or 32)', (t) => {
  t.true(verifyXEdDSA(ALICE_IDENTITY_PUBLIC, ALICE_EPHEMERAL_PUBLIC, ALICE_SIGNATURE));
  t.true(verifyXEdDSA(ALICE_IDENTITY_PUBLIC.subarray(1), ALICE_EPHEMERAL_PUBLIC, ALICE_SIGNATURE));
  // Plain Uint8Arrays (protobuf decoders may give those), not only Buffers.
  t.true(verifyXEdDSA(new Uint8Array(ALICE_IDENTITY_PUBLIC.subarray(1)), new Uint8Array(ALICE_EPHEMERAL_PUBLIC), new Uint8Array(ALICE_SIGNATURE)));
});

test('refuses the known-answer signature with any one bit of it flipped (each of the 64 bytes)', (t) => {
  for (let i = 0; i < ALICE_SIGNATURE.length; i++) {
    for (const bit of [0x01, 0x80]) {
      const changed = Buffer.from(ALICE_SIGNATURE);
      changed[i]! ^= bit;
      t.false(verifyXEdDSA(ALICE_IDENTITY_PUBLIC, ALICE_EPHEMERAL_PUBLIC, changed), `byte ${i} ^ ${bit}`);
    }
  }
});

test('refuses another key, another message, and malformed input (without throwing)', (t) => {
  t.false(verifyXEdDSA(ALICE_EPHEMERAL_PUBLIC, ALICE_EPHEMERAL_PUBLIC, ALICE_SIGNATURE), 'another key');
  const otherMessage = Buffer.from(ALICE_EPHEMERAL_PUBLIC);
  otherMessage[10]! ^= 1;
  t.false(verifyXEdDSA(ALICE_IDENTITY_PUBLIC, otherMessage, ALICE_SIGNATURE), 'another message');
  t.false(verifyXEdDSA(ALICE_IDENTITY_PUBLIC, ALICE_EPHEMERAL_PUBLIC, ALICE_SIGNATURE.subarray(0, 63)), 'short signature');
  t.false(verifyXEdDSA(ALICE_IDENTITY_PUBLIC, ALICE_EPHEMERAL_PUBLIC, Buffer.concat([ALICE_SIGNATURE, Buffer.of(0)])), 'long signature');
  t.false(verifyXEdDSA(ALICE_IDENTITY_PUBLIC.subarray(2), ALICE_EPHEMERAL_PUBLIC, ALICE_SIGNATURE), '31-byte key');
  t.false(verifyXEdDSA(Buffer.concat([Buffer.of(6), ALICE_IDENTITY_PUBLIC.subarray(1)]), ALICE_EPHEMERAL_PUBLIC, ALICE_SIGNATURE), 'wrong type byte');
  t.false(verifyXEdDSA(Buffer.alloc(0), Buffer.alloc(0), Buffer.alloc(0)), 'empty');
});

test('agrees with Baileys\' own signing: what Curve.sign makes verifies, with another key it does not', (t) => {
  const key = Curve.generateKeyPair();
  const message = Buffer.from('intermediate certificate details');
  const signature = Curve.sign(key.private, message);
  t.true(verifyXEdDSA(key.public, message, signature));
  t.false(verifyXEdDSA(Curve.generateKeyPair().public, message, signature));
});

/** A verifier that answers from a table and counts its calls. */
function counting(answer: (signature: Uint8Array) => boolean): { verify: VerifySignature; calls: () => number } {
  let calls = 0;
  return {
    verify: (_key, _message, signature) => {
      calls++;
      return answer(signature);
    },
    calls: () => calls,
  };
}

test('the cache answers a repeat of accepted inputs from memory, and only of exactly those inputs', (t) => {
  const inner = counting(() => true);
  const verify = memoizeVerify(inner.verify);
  const [key, message, signature] = [Buffer.from('k'), Buffer.from('m'), Buffer.from('s')];
  t.true(verify(key, message, signature));
  t.true(verify(Buffer.from(key), Buffer.from(message), Buffer.from(signature)), 'equal bytes, other buffers');
  t.is(inner.calls(), 1);
  // The same bytes split differently between key, message and signature are other inputs.
  t.true(verify(Buffer.from('km'), Buffer.alloc(0), signature));
  t.true(verify(key, Buffer.from('ms'), Buffer.alloc(0)));
  t.is(inner.calls(), 3);
});

test('the cache never remembers a refusal: refused inputs are checked again each time', (t) => {
  let accept = false;
  const inner = counting(() => accept);
  const verify = memoizeVerify(inner.verify);
  const args = [Buffer.from('k'), Buffer.from('m'), Buffer.from('s')] as const;
  t.false(verify(...args));
  t.false(verify(...args));
  t.is(inner.calls(), 2);
  accept = true;
  t.true(verify(...args));
  t.true(verify(...args));
  t.is(inner.calls(), 3);
});

test('the cache is bounded: inputs beyond its capacity are forgotten, least recently used first', (t) => {
  const inner = counting(() => true);
  const verify = memoizeVerify(inner.verify, 2);
  const check = (s: string): boolean => verify(Buffer.from('k'), Buffer.from('m'), Buffer.from(s));
  check('a');
  check('b');
  check('a'); // a is now the most recently used
  check('c'); // forgets b
  t.is(inner.calls(), 3);
  check('a');
  t.is(inner.calls(), 3);
  check('b');
  t.is(inner.calls(), 4);
});

test('installed, Baileys\' Curve.verify refuses a wrong signature and accepts a right one (rc14\'s accepted both)', (t) => {
  const key = Curve.generateKeyPair();
  const message = Buffer.from('leaf certificate details');
  const signature = Curve.sign(key.private, message);
  const other = Curve.generateKeyPair().public;
  const before = Curve.verify;
  installCurveVerify();
  t.not(Curve.verify, before);
  t.true(Curve.verify(key.public, message, signature));
  t.false(Curve.verify(other, message, signature));
  t.false(Curve.verify(other, message, signature), 'still refused when asked again');
  installCurveVerify();
  t.false(Curve.verify(other, message, signature), 'installing twice changes nothing');
});
