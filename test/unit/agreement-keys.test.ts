import test from 'ava';
import { createRequire } from 'node:module';
import { cachedAgreement, installCachedAgreement } from '../../src/connection/baileys/agreement-keys.js';

// Issue 26 item 3 (no stall while phones pair): libsignal's X25519 agreement keeps its OpenSSL key
// objects instead of parsing both keys from DER at every call. The rule: the same answer as
// libsignal's own function for every key pair, and the same refusals of malformed keys.

interface Curve {
  calculateAgreement(pub: Buffer, priv: Buffer): Buffer;
  generateKeyPair(): { pubKey: Buffer; privKey: Buffer };
}
const curve = createRequire(import.meta.resolve('@whiskeysockets/baileys'))('libsignal/src/curve.js') as Curve;
const libsignals = curve.calculateAgreement;
const original = libsignals.bind(curve);

test('cached X25519 agreement answers as libsignal does, both ways, for 200 key pairs and again from the cache', (t) => {
  const agree = cachedAgreement(original);
  const pairs = Array.from({ length: 200 }, () => curve.generateKeyPair());
  for (let i = 0; i < pairs.length; i++) {
    const a = pairs[i]!;
    const b = pairs[(i * 7 + 3) % pairs.length]!;
    const expected = original(b.pubKey, a.privKey);
    t.deepEqual(agree(b.pubKey, a.privKey), expected);
    t.deepEqual(agree(b.pubKey, a.privKey), expected, 'from the cache');
    t.deepEqual(agree(a.pubKey, b.privKey), expected, 'the other side agrees');
  }
});

test('malformed keys are refused as libsignal refuses them', (t) => {
  const agree = cachedAgreement(original);
  const { pubKey, privKey } = curve.generateKeyPair();
  t.throws(() => agree(pubKey, privKey.subarray(1)), { message: /private key length/ });
  t.throws(() => agree(Buffer.concat([Buffer.of(6), pubKey.subarray(1)]), privKey), { message: /Invalid public key/ });
  t.throws(() => agree(pubKey.subarray(2), privKey), { message: /Invalid public key/ });
  t.throws(() => agree(new Uint8Array(pubKey) as Buffer, privKey), { message: /Invalid public key type/ });
});

test('installed, libsignal\'s curve module answers through the cache', (t) => {
  installCachedAgreement();
  t.not(curve.calculateAgreement, libsignals, 'replaced on the module object libsignal reads');
  const a = curve.generateKeyPair();
  const b = curve.generateKeyPair();
  t.deepEqual(curve.calculateAgreement(b.pubKey, a.privKey), original(a.pubKey, b.privKey));
});

test("installed, Baileys' Curve.sharedKey (the Noise handshake) agrees with libsignal's function, Buffers or not", async (t) => {
  const { Curve } = await import('@whiskeysockets/baileys');
  installCachedAgreement();
  for (let i = 0; i < 20; i++) {
    const a = Curve.generateKeyPair();
    const b = Curve.generateKeyPair();
    const expected = original(Buffer.concat([Buffer.of(5), b.public]), Buffer.from(a.private));
    t.deepEqual(Curve.sharedKey(a.private, b.public), expected);
    t.deepEqual(Curve.sharedKey(new Uint8Array(a.private), new Uint8Array(b.public)), expected, 'from plain Uint8Arrays');
  }
});
