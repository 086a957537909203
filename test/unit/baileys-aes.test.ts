import test from 'ava';
import { syncBuiltinESMExports } from 'node:module';
import nodeCrypto, { randomBytes } from 'node:crypto';
import { aesDecrypt } from '@whiskeysockets/baileys';
import { aesCbcDecrypt, BAILEYS_AES_CBC_KEY, installBaileysAes, JS_CBC_MAX_BYTES } from '../../src/connection/baileys/app-state-aes.js';

// Issue 26 item 3 (no stall while phones pair): Baileys' app-state decryption (one AES-256-CBC a
// mutation) without a native Decipheriv object each, whose weak-handle callbacks ran in every full
// collection's final pause. The rule: the bytes and the refusals of Node's AES-256-CBC for every
// input, and no Decipheriv made by Baileys' `aesDecrypt` for an app-state-sized value once installed
// (patches/ makes it ask the installed function). That a whole snapshot decodes through it (3,000
// mutations to the double's LT hash) is proven by test/unit/baileys-app-state-slices.test.ts.
// Serial: the createDecipheriv counter is process-wide.

function encrypt(plain: Buffer, key: Buffer, iv: Buffer): Buffer {
  const cipher = nodeCrypto.createCipheriv('aes-256-cbc', key, iv);
  return Buffer.concat([cipher.update(plain), cipher.final()]);
}

/** Node's answer: the bytes, or that it refused. */
function nodeDecrypt(data: Buffer, key: Buffer, iv: Buffer): Buffer | 'refused' {
  try {
    const decipher = nodeCrypto.createDecipheriv('aes-256-cbc', key, iv);
    return Buffer.concat([decipher.update(data), decipher.final()]);
  } catch {
    return 'refused';
  }
}

function ours(data: Buffer, key: Buffer, iv: Buffer): Buffer | 'refused' {
  try {
    return aesCbcDecrypt(data, key, iv);
  } catch {
    return 'refused';
  }
}

/** Counts createDecipheriv calls made through node:crypto's exports (Baileys imports it by name) while `fn` runs. */
function countingDeciphers(fn: () => void): number {
  const { createDecipheriv } = nodeCrypto;
  let made = 0;
  nodeCrypto.createDecipheriv = ((...a: Parameters<typeof createDecipheriv>) => (made++, createDecipheriv(...a))) as typeof createDecipheriv;
  syncBuiltinESMExports();
  try {
    fn();
  } finally {
    nodeCrypto.createDecipheriv = createDecipheriv;
    syncBuiltinESMExports();
  }
  return made;
}

test.serial("the bytes of Node's AES-256-CBC for every plaintext length up to past the JavaScript bound", (t) => {
  for (let length = 0; length <= JS_CBC_MAX_BYTES + 40; length += 1) {
    const key = randomBytes(32);
    const iv = randomBytes(16);
    const plain = randomBytes(length);
    const result = aesCbcDecrypt(encrypt(plain, key, iv), key, iv);
    if (!result.equals(plain)) t.fail(`a plaintext of ${length} bytes`);
  }
  t.pass();
});

test.serial("refuses what Node refuses: a wrong key or IV, damaged bytes, no whole blocks, nothing at all", (t) => {
  const key = randomBytes(32);
  const iv = randomBytes(16);
  let refused = 0;
  for (let i = 0; i < 300; i++) {
    const data = encrypt(randomBytes(i % 200), key, iv);
    const damaged = Buffer.from(data);
    damaged[damaged.length - 1 - (i % 16)]! ^= 1 << (i % 8);
    const cases: Array<[Buffer, Buffer, Buffer]> = [
      [data, randomBytes(32), iv], // another key: refused, or (rarely) padding that looks right and the same garbage
      [damaged, key, iv],
      [data.subarray(0, data.length - 1 - (i % 15)), key, iv],
    ];
    for (const [d, k, v] of cases) {
      const expected = nodeDecrypt(d, k, v);
      t.deepEqual(ours(d, k, v), expected, `case ${i}`);
      if (expected === 'refused') refused += 1;
    }
  }
  t.true(refused > 600, `most of them are refusals (${refused})`);
  t.is(ours(Buffer.alloc(0), key, iv), 'refused');
  t.is(nodeDecrypt(Buffer.alloc(0), key, iv), 'refused');
});

test.serial("installed, Baileys' aesDecrypt gives Node's bytes and makes no Decipheriv for an app-state value (patches/ makes it ask the gateway)", (t) => {
  const key = randomBytes(32);
  const values = Array.from({ length: 40 }, (_, i) => randomBytes(i * 11));
  // Baileys' form: the IV, then the ciphertext.
  const sealed = values.map((v) => {
    const iv = randomBytes(16);
    return Buffer.concat([iv, encrypt(v, key, iv)]);
  });
  const g = globalThis as Record<symbol, unknown>;
  const before = g[BAILEYS_AES_CBC_KEY];
  delete g[BAILEYS_AES_CBC_KEY];
  try {
    t.true(countingDeciphers(() => sealed.forEach((s) => aesDecrypt(s, key))) >= sealed.length, "the counter sees Baileys' own objects when nothing is installed");
    installBaileysAes();
    let results: Buffer[] = [];
    t.is(countingDeciphers(() => (results = sealed.map((s) => aesDecrypt(s, key)))), 0, 'no Decipheriv once installed (is patches/ applied to Baileys?)');
    t.deepEqual(results, values);
    // A value past the JavaScript bound still decrypts, through Node.
    const big = randomBytes(JS_CBC_MAX_BYTES * 2);
    const iv = randomBytes(16);
    t.deepEqual(aesDecrypt(Buffer.concat([iv, encrypt(big, key, iv)]), key), big);
  } finally {
    if (before === undefined) delete g[BAILEYS_AES_CBC_KEY];
    else g[BAILEYS_AES_CBC_KEY] = before;
  }
});
