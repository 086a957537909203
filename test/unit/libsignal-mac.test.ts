import test from 'ava';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import nodeCrypto, { randomBytes } from 'node:crypto';
import { hmacSha256, installObjectFreeMacs } from '../../src/connection/baileys/libsignal-mac.js';

// Issue 26 item 3 (no stall while phones pair): libsignal's MACs without a native Hmac object per
// call (each one a weak-handle callback in a full collection's final pause). The rule: the same
// bytes as libsignal's own functions for every input, the same refusals, and no Hmac or Hash object
// made once installed. Tests in this file run serially: the createHmac counter is process-wide.

interface LibsignalCrypto {
  calculateMAC(key: Buffer, data: Buffer): Buffer;
  deriveSecrets(input: Buffer, salt: Buffer, info: Buffer, chunks?: number): Buffer[];
  verifyMAC(data: Buffer, key: Buffer, mac: Buffer, length: number): void;
  hash(data: Buffer): Buffer;
}
const module = createRequire(import.meta.resolve('@whiskeysockets/baileys'))('libsignal/src/crypto.js') as LibsignalCrypto;
const original: LibsignalCrypto = { calculateMAC: module.calculateMAC, deriveSecrets: module.deriveSecrets, verifyMAC: module.verifyMAC, hash: module.hash };

/** Counts createHmac and createHash calls made through the node:crypto module object (libsignal's way) while `fn` runs. */
function countingObjects(fn: () => void): number {
  const { createHmac, createHash } = nodeCrypto;
  let made = 0;
  Object.assign(nodeCrypto, {
    createHmac: (...a: Parameters<typeof createHmac>) => (made++, createHmac(...a)),
    createHash: (...a: Parameters<typeof createHash>) => (made++, createHash(...a)),
  });
  syncBuiltinESMExports();
  try {
    fn();
  } finally {
    Object.assign(nodeCrypto, { createHmac, createHash });
    syncBuiltinESMExports();
  }
  return made;
}

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

  installObjectFreeMacs();
  installObjectFreeMacs(); // idempotent
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
  installObjectFreeMacs();
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
