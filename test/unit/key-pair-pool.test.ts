/**
 * Pairing without stalls (issue 26 item 3): X25519 key pairs are made ahead, in batches on a thread
 * of their own (src/connection/baileys/key-pair-pool.ts, key-pair-thread.ts), so a new device's 812
 * pre-keys no longer cost one long turn of the event loop. Guards: every pair is a true X25519 pair (the public half is the private
 * half's, agreements match), no pair is ever handed out twice, a dry or failing pool still answers
 * (on this thread), and the install reaches both callers, Baileys' `Curve` and libsignal's curve
 * module. That Baileys' pre-keys made this way work against a contact's session is proven through
 * the protocol double in test/e2e/double-messages.test.ts (the LID senders test).
 */
import { createPrivateKey, createPublicKey, diffieHellman } from 'node:crypto';
import test from 'ava';
import { Curve } from '@whiskeysockets/baileys';
import { KeyPairPool, installKeyPairPool, keyPairsLater, keyPairNow, type RawKeyPair } from '../../src/connection/baileys/key-pair-pool.js';
import { KeyPairThread } from '../../src/connection/baileys/key-pair-thread.js';
import { requireFromBaileys } from '../../src/connection/baileys/from-baileys.js';

const X25519_PKCS8 = Buffer.from([48, 46, 2, 1, 0, 48, 5, 6, 3, 43, 101, 110, 4, 34, 4, 32]);
const X25519_SPKI = Buffer.from([48, 42, 48, 5, 6, 3, 43, 101, 110, 3, 33, 0]);

const privateKey = (raw: Buffer) => createPrivateKey({ key: Buffer.concat([X25519_PKCS8, raw]), format: 'der', type: 'pkcs8' });
const publicKey = (raw: Buffer) => createPublicKey({ key: Buffer.concat([X25519_SPKI, raw]), format: 'der', type: 'spki' });

/** The public half OpenSSL derives from the private half: what it must be. */
function derivedPublic(pair: RawKeyPair): Buffer {
  return createPublicKey(privateKey(pair.private)).export({ format: 'der', type: 'spki' }).subarray(X25519_SPKI.length);
}

test('pairs made now and made on the key-pair thread are X25519 pairs: the public half is derived from the private one, and two pairs agree on one secret', async (t) => {
  const a = keyPairNow();
  const batch = await keyPairsLater(5);
  t.is(batch.length, 5);
  t.is(new Set(batch.map((p) => p.private.toString('hex'))).size, 5, 'five different pairs');
  const b = batch[0]!;
  for (const pair of [a, ...batch]) {
    t.is(pair.private.length, 32);
    t.is(pair.public.length, 32);
    t.deepEqual(derivedPublic(pair), pair.public);
  }
  const ab = diffieHellman({ privateKey: privateKey(a.private), publicKey: publicKey(b.public) });
  const ba = diffieHellman({ privateKey: privateKey(b.private), publicKey: publicKey(a.public) });
  t.deepEqual(ab, ba);
  t.notDeepEqual(a.private, b.private);
});

test('a pool fills in the background once taken from, hands out what it made, and never the same pair twice (made ahead, or now when dry)', async (t) => {
  const pool = new KeyPairPool({ size: 300, batch: 100 });
  t.is(pool.available, 0, 'nothing made before the first take');
  const seen = new Set<string>();
  const remember = (pair: RawKeyPair) => {
    const id = pair.private.toString('hex');
    t.false(seen.has(id), 'a private key handed out twice');
    seen.add(id);
  };
  remember(pool.take()); // dry: made now, and starts the refill
  await pool.filled();
  t.is(pool.available, 300);
  // A new device's pre-keys at once, more than the pool holds: 300 from the pool, the rest made now.
  for (let i = 0; i < 812; i++) remember(pool.take());
  t.true(pool.available < 300);
  await pool.filled();
  t.is(pool.available, 300, 'refilled to its size');
  for (let i = 0; i < 300; i++) remember(pool.take());
  t.is(seen.size, 1 + 812 + 300);
});

test('a refill keeps several batches in the making at once, never more than asked, whole batches only, never past its size (one pair at a time, a busy event loop got few a turn and the pool ran dry while phones paired)', async (t) => {
  const waiting: Array<() => void> = [];
  const asked: number[] = [];
  let most = 0;
  const later = (count: number) =>
    new Promise<RawKeyPair[]>((resolve) => {
      asked.push(count);
      waiting.push(() => resolve(Array.from({ length: count }, keyPairNow)));
      most = Math.max(most, waiting.length);
    });
  const pool = new KeyPairPool({ size: 22, batch: 4, inFlight: 3, later });
  t.is(waiting.length, 0, 'nothing made before the first take or prime');
  pool.prime();
  t.is(waiting.length, 3, 'three batches in the making at once');
  // Each finished batch starts the next while the pool lacks more than those in the making.
  for (let turns = 0; waiting.length > 0 && turns < 100; turns++) {
    waiting.shift()!();
    await new Promise((r) => setImmediate(r));
  }
  t.is(pool.available, 20, 'filled to within a batch of its size, not past it');
  t.is(most, 3, 'never more than three batches at once');
  t.deepEqual(asked, [4, 4, 4, 4, 4], 'whole batches only');
  // One taken: the pool lacks less than a batch and asks for nothing; three taken: one batch.
  pool.take();
  t.is(waiting.length, 0);
  pool.take();
  pool.take();
  t.is(waiting.length, 1);
  t.deepEqual(asked, [4, 4, 4, 4, 4, 4]);
  waiting.shift()!();
  await new Promise((r) => setImmediate(r));
  t.is(pool.available, 21);
});

test('by default 2 batches of 128 are in the making at once, and a full pool makes none', async (t) => {
  const asked: number[] = [];
  const pending: Array<() => void> = [];
  const pool = new KeyPairPool({
    size: 300,
    later: (count) => {
      asked.push(count);
      return new Promise<RawKeyPair[]>((resolve) => pending.push(() => resolve(Array.from({ length: count }, keyPairNow))));
    },
  });
  pool.prime();
  t.deepEqual(asked, [128, 128]);
  while (pending.length > 0) {
    for (const done of pending.splice(0)) done();
    await new Promise((r) => setImmediate(r));
  }
  t.is(pool.available, 256);
  t.deepEqual(asked, [128, 128], 'no more made than the pool holds');
  pool.prime();
  t.is(asked.length, 2);
});

test('the key-pair thread answers batches in order, and one that ends rejects what it owed and the next batch starts a new one', async (t) => {
  const thread = new KeyPairThread();
  const [one, two] = await Promise.all([thread.batch(3), thread.batch(7)]);
  t.is(one.length, 3);
  t.is(two.length, 7);
  for (const pair of [...one, ...two]) t.deepEqual(derivedPublic(pair), pair.public);
  const owed = thread.batch(50);
  await thread.close();
  await t.throwsAsync(owed, { message: /closed/ });
  const again = await thread.batch(2);
  t.is(again.length, 2);
  t.deepEqual(derivedPublic(again[1]!), again[1]!.public);
  await thread.close();
});

test('a failing refill is reported and the pool still answers, on this thread', async (t) => {
  const errors: unknown[] = [];
  const pool = new KeyPairPool({ size: 10, batch: 5, later: () => Promise.reject(new Error('thread pool gone')), onError: (err) => errors.push(err) });
  const pair = pool.take();
  t.deepEqual(derivedPublic(pair), pair.public);
  await pool.filled();
  t.is(pool.available, 0);
  t.is(errors.length, 1);
  t.regex(String(errors[0]), /thread pool gone/);
  // The next take tries again (and fails again, reported), still answering.
  const next = pool.take();
  await pool.filled();
  t.is(errors.length, 2);
  t.notDeepEqual(next.private, pair.private);
});

test('a refill whose maker throws instead of rejecting is reported once, and take() still answers', async (t) => {
  const errors: unknown[] = [];
  const pool = new KeyPairPool({
    size: 10,
    batch: 5,
    later: () => {
      throw new Error('no thread pool');
    },
    onError: (err) => errors.push(err),
  });
  const pair = pool.take();
  t.deepEqual(derivedPublic(pair), pair.public);
  await pool.filled();
  t.is(pool.available, 0);
  t.is(errors.length, 1);
  t.regex(String(errors[0]), /no thread pool/);
});

test("installed, Baileys' Curve.generateKeyPair and libsignal's generateKeyPair both take from the one pool, in their own shapes", async (t) => {
  const libsignal = requireFromBaileys('libsignal/src/curve.js') as {
    generateKeyPair(): { pubKey: Buffer; privKey: Buffer };
    calculateAgreement(pub: Buffer, priv: Buffer): Buffer;
  };
  const pool = installKeyPairPool(Curve, libsignal, { size: 64, batch: 16 });
  t.is(installKeyPairPool(Curve, libsignal), pool, 'once per process');
  await pool.filled();

  const fromBaileys = Curve.generateKeyPair();
  t.is(pool.available, 63, "Baileys' call took one made ahead");
  t.is(fromBaileys.public.length, 32);
  t.deepEqual(derivedPublic({ private: Buffer.from(fromBaileys.private), public: Buffer.from(fromBaileys.public) }), Buffer.from(fromBaileys.public));

  await pool.filled();
  t.is(pool.available, 63, 'one short of its size is less than a batch: nothing asked for');
  const fromLibsignal = libsignal.generateKeyPair();
  t.is(pool.available, 62, "libsignal's call took one made ahead");
  t.is(fromLibsignal.pubKey.length, 33);
  t.is(fromLibsignal.pubKey[0], 5, "libsignal's public keys carry the type byte");
  t.is(fromLibsignal.privKey.length, 32);
  // libsignal's own agreement accepts both, and both sides find the same secret.
  const one = libsignal.calculateAgreement(fromLibsignal.pubKey, Buffer.from(fromBaileys.private));
  const other = libsignal.calculateAgreement(Buffer.concat([Buffer.from([5]), Buffer.from(fromBaileys.public)]), fromLibsignal.privKey);
  t.deepEqual(Buffer.from(one), Buffer.from(other));
});
