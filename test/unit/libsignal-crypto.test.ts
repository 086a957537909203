import test from 'ava';
import { createRequire } from 'node:module';
import nodeCrypto, { randomBytes } from 'node:crypto';
import { hmacSha256, installObjectFreeCrypto, type LibsignalCrypto as Replaced } from '../../src/connection/baileys/libsignal-crypto.js';
import { countingNodeCrypto } from '../helpers/count-node-crypto.js';

// Issue 26 item 3 (no stall while phones pair): libsignal's MACs and decryption without a native
// Hmac, Hash or Decipher object per call (each one a weak-handle callback in a collection's pause).
// The rule: the same bytes as libsignal's own functions for every input, the same refusals, and no
// Hmac, Hash or Decipher object made once installed. Tests in this file run serially: the createHmac counter is process-wide.

/** What libsignal's crypto module offers: what the gateway replaces, and its encrypt (the tests' encoder). */
type LibsignalCrypto = Replaced & { encrypt(key: Buffer, data: Buffer, iv: Buffer): Buffer };
const module = createRequire(import.meta.resolve('@whiskeysockets/baileys'))('libsignal/src/crypto.js') as LibsignalCrypto;
const original: LibsignalCrypto = { calculateMAC: module.calculateMAC, deriveSecrets: module.deriveSecrets, verifyMAC: module.verifyMAC, hash: module.hash, decrypt: module.decrypt, encrypt: module.encrypt };

const countingObjects = (fn: () => void): number => countingNodeCrypto(['createHmac', 'createHash', 'createDecipheriv'], fn);

test.serial('HMAC-SHA256 from two hashes equals createHmac for keys shorter than, as long as and longer than a block', (t) => {
  for (const keyLength of [0, 1, 32, 63, 64, 65, 100, 200]) {
    for (const dataLength of [0, 1, 33, 64, 1000]) {
      const key = randomBytes(keyLength);
      const data = randomBytes(dataLength);
      t.deepEqual(hmacSha256(key, data), nodeCrypto.createHmac('sha256', key).update(data).digest(), `key ${keyLength}, data ${dataLength}`);
    }
  }
});

test.serial("installed, libsignal's MAC, HKDF, MAC check and hash give its own answers and make no Hmac or Hash object", (t) => {
  const inputs = Array.from({ length: 50 }, (_, i) => ({ key: randomBytes(32), data: randomBytes(i * 13), salt: i % 2 ? Buffer.alloc(32) : randomBytes(32), info: Buffer.from(`WhisperMessageKeys${i}`) }));
  const expected: unknown[] = [];
  const before = countingObjects(() => {
    for (const { key, data, salt, info } of inputs) {
      expected.push(original.calculateMAC(key, data), original.deriveSecrets(data, salt, info), original.deriveSecrets(data, salt, info, 1), original.deriveSecrets(data, salt, info, 2), original.hash(data));
    }
  });
  t.true(before > 0, 'the counter sees libsignal\'s own objects');

  installObjectFreeCrypto();
  installObjectFreeCrypto(); // idempotent
  t.not(module.calculateMAC, original.calculateMAC, 'replaced on the module object libsignal reads');
  const got: unknown[] = [];
  const after = countingObjects(() => {
    for (const { key, data, salt, info } of inputs) {
      got.push(module.calculateMAC(key, data), module.deriveSecrets(data, salt, info), module.deriveSecrets(data, salt, info, 1), module.deriveSecrets(data, salt, info, 2), module.hash(data));
      const mac = module.calculateMAC(key, data);
      module.verifyMAC(data, key, mac.subarray(0, 8), 8);
    }
  });
  t.deepEqual(got, expected);
  t.is(after, 0);
});

test.serial('refusals are libsignal\'s: not a Buffer, a salt of the wrong length, a bad chunk count, a bad or short MAC', (t) => {
  installObjectFreeCrypto();
  const key = randomBytes(32);
  const data = randomBytes(40);
  const mac = module.calculateMAC(key, data);
  const same = (fn: (c: LibsignalCrypto) => unknown) => {
    const theirs = t.throws(() => fn(original));
    const ours = t.throws(() => fn(module));
    t.is(ours?.constructor, theirs?.constructor);
    t.is(ours?.message, theirs?.message);
  };
  same((c) => c.calculateMAC(new Uint8Array(32) as Buffer, data));
  same((c) => c.calculateMAC(key, 'text' as unknown as Buffer));
  same((c) => c.deriveSecrets(data, Buffer.alloc(31), Buffer.from('x')));
  same((c) => c.deriveSecrets(data, Buffer.alloc(32), Buffer.from('x'), 4));
  same((c) => c.verifyMAC(data, key, Buffer.from(mac.subarray(0, 8)).fill(0), 8));
  same((c) => c.verifyMAC(data, key, mac.subarray(0, 7), 8));
  same((c) => c.hash(null as unknown as Buffer));
});

test.serial("installed, libsignal's decrypt gives its own plaintext and refusals, with no Decipher object a message", (t) => {
  const inputs = Array.from({ length: 40 }, (_, i) => {
    const key = randomBytes(32);
    const iv = randomBytes(16);
    const plain = randomBytes(i * 9);
    return { key, iv, plain, data: original.encrypt(key, plain, iv) };
  });
  t.true(countingObjects(() => inputs.forEach(({ key, iv, data }) => original.decrypt(key, data, iv))) >= inputs.length, "the counter sees libsignal's own objects");
  installObjectFreeCrypto();
  t.not(module.decrypt, original.decrypt, 'replaced on the module object libsignal reads');
  const got: Buffer[] = [];
  // The same key for every message of a chain, as a session's: one block decipher for all of them.
  const key = randomBytes(32);
  const chain = inputs.map(({ iv, plain }) => ({ iv, plain, data: original.encrypt(key, plain, iv) }));
  const made = countingObjects(() => chain.forEach(({ iv, data }) => got.push(module.decrypt(key, data, iv))));
  t.true(made <= 1, `${made} Decipher objects for ${chain.length} messages`);
  t.deepEqual(got, chain.map((c) => c.plain));
  t.deepEqual(inputs.map(({ key: k, iv, data }) => module.decrypt(k, data, iv)), inputs.map((i) => i.plain));
  const { key: k, iv, data } = inputs[3]!;
  for (const bad of [
    () => [new Uint8Array(k) as Buffer, data, iv],
    () => [k, 'text' as unknown as Buffer, iv],
    () => [k, data, null as unknown as Buffer],
  ] as Array<() => [Buffer, Buffer, Buffer]>) {
    const theirs = t.throws(() => original.decrypt(...bad()));
    const ours = t.throws(() => module.decrypt(...bad()));
    t.is(ours?.constructor, theirs?.constructor);
    t.is(ours?.message, theirs?.message);
  }
  // A corrupt message is refused by both (the message differs: OpenSSL's against ours).
  t.throws(() => original.decrypt(k, data.subarray(0, data.length - 1), iv));
  t.throws(() => module.decrypt(k, data.subarray(0, data.length - 1), iv));
});
