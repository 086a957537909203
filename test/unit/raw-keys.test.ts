import test, { type ExecutionContext } from 'ava';
import { createPrivateKey, createPublicKey, diffieHellman, generateKeyPairSync, randomBytes, sign, verify } from 'node:crypto';
import { ed25519PublicKey, jwkImportInUse, x25519PrivateKey, x25519PublicKey } from '../../src/connection/baileys/raw-keys.js';

// Issue 26 item 3 (no stall while phones pair): raw Curve25519/Ed25519 keys are imported as JWK,
// which skips OpenSSL's slow DER decoders. The rule: the very key DER would give, on this runtime
// (the suite runs on Node 20 and 24). Public keys never fall back to DER; private keys fall back
// exactly where the runtime refuses a private JWK without `x` (Node 24.22 does, Node 20 does not).

const X25519_SPKI = Buffer.from('302a300506032b656e032100', 'hex');
const X25519_PKCS8 = Buffer.from('302e020100300506032b656e04220420', 'hex');
const ED25519_SPKI = Buffer.from('302a300506032b6570032100', 'hex');

/** Asked of the runtime itself, not of raw-keys.ts: does it take a private OKP JWK with an empty `x`? */
function runtimeTakesPrivateJwk(): boolean {
  const d = generateKeyPairSync('x25519').privateKey.export({ format: 'jwk' }).d!;
  try {
    createPrivateKey({ key: { kty: 'OKP', crv: 'X25519', d, x: '' }, format: 'jwk' });
    return true;
  } catch {
    return false;
  }
}

/** Public keys on JWK always; private keys on JWK exactly where the runtime takes that form. */
function formsAsExpected(t: ExecutionContext): void {
  // One valid import of each kind first, so the answer does not hang on which test ran before.
  x25519PrivateKey(randomBytes(32));
  x25519PublicKey(randomBytes(32));
  t.true(jwkImportInUse('public'), 'public keys are imported as JWK');
  t.is(jwkImportInUse('private'), runtimeTakesPrivateJwk(), `private keys on JWK only where ${process.version} takes it`);
}

test('X25519: keys imported as JWK agree exactly as keys imported as DER', (t) => {
  for (let i = 0; i < 50; i++) {
    const a = generateKeyPairSync('x25519');
    const b = generateKeyPairSync('x25519');
    const aPriv = Buffer.from(a.privateKey.export({ format: 'jwk' }).d!, 'base64url');
    const bPub = Buffer.from(b.publicKey.export({ format: 'jwk' }).x!, 'base64url');
    const viaDer = diffieHellman({
      privateKey: createPrivateKey({ key: Buffer.concat([X25519_PKCS8, aPriv]), format: 'der', type: 'pkcs8' }),
      publicKey: createPublicKey({ key: Buffer.concat([X25519_SPKI, bPub]), format: 'der', type: 'spki' }),
    });
    t.deepEqual(diffieHellman({ privateKey: x25519PrivateKey(aPriv), publicKey: x25519PublicKey(bPub) }), viaDer);
    t.deepEqual(x25519PublicKey(bPub).export({ format: 'der', type: 'spki' }), Buffer.concat([X25519_SPKI, bPub]));
  }
  formsAsExpected(t);
});

test('Ed25519: a public key imported as JWK verifies what its private key signed, and nothing else', (t) => {
  for (let i = 0; i < 50; i++) {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
    const message = randomBytes(64);
    const signature = sign(null, message, privateKey);
    const key = ed25519PublicKey(raw);
    t.deepEqual(key.export({ format: 'der', type: 'spki' }), Buffer.concat([ED25519_SPKI, raw]));
    t.true(verify(null, message, key, signature));
    t.false(verify(null, randomBytes(64), key, signature));
  }
  formsAsExpected(t);
});

test('a raw key that is not 32 bytes is refused, and the forms in use stay as they were', (t) => {
  for (const n of [31, 33, 0]) {
    t.throws(() => x25519PublicKey(new Uint8Array(n)), { message: /32 bytes/ });
    t.throws(() => x25519PrivateKey(new Uint8Array(n)), { message: /32 bytes/ });
    t.throws(() => ed25519PublicKey(new Uint8Array(n)), { message: /32 bytes/ });
  }
  formsAsExpected(t);
});

test('what the JWK form saves, logged (the figure in raw-keys.ts): X25519 private and public imports, JWK against DER', (t) => {
  const raw = Buffer.from(generateKeyPairSync('x25519').privateKey.export({ format: 'jwk' }).d!, 'base64url');
  const time = (f: () => unknown): number => {
    const start = performance.now();
    for (let i = 0; i < 500; i++) f();
    return ((performance.now() - start) * 1000) / 500;
  };
  const jwkPrivate = time(() => x25519PrivateKey(raw));
  const derPrivate = time(() => createPrivateKey({ key: Buffer.concat([X25519_PKCS8, raw]), format: 'der', type: 'pkcs8' }));
  const jwkPublic = time(() => x25519PublicKey(raw));
  const derPublic = time(() => createPublicKey({ key: Buffer.concat([X25519_SPKI, raw]), format: 'der', type: 'spki' }));
  t.log(`${process.version}, private keys via ${jwkImportInUse('private') ? 'JWK' : 'DER'}; µs an import: private JWK ${jwkPrivate.toFixed(0)}, DER ${derPrivate.toFixed(0)}; public JWK ${jwkPublic.toFixed(0)}, DER ${derPublic.toFixed(0)}`);
  formsAsExpected(t);
});
