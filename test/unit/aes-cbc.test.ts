import test from 'ava';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { countingNodeCrypto } from '../helpers/count-node-crypto.js';
import { aesDecrypt, aesDecryptWithIV } from '@whiskeysockets/baileys';
import { aes256CbcDecrypt } from '../../src/domain/aes-cbc.js';
import { BAILEYS_AES_CBC_KEY, installBaileysAes } from '../../src/connection/baileys/baileys-aes.js';

// Issue 26 item 3 (no stall while phones pair): AES-256-CBC decryption without a native Decipher
// object a call (each one a weak-handle callback in a collection's pause; a realistic account's
// first app-state sync decrypts ~410 mutations). The rule: createDecipheriv('aes-256-cbc')'s bytes
// for every input, its refusals, a refused input never spoils the next call (the block decipher is
// kept per key), and Baileys' aesDecrypt makes no Decipher once installed (patches/). That a real
// app-state sync decodes through it is proven by test/integration/double-account.test.ts.
// Serial: the createDecipheriv counter is process-wide.

const encrypt = (plain: Uint8Array, key: Uint8Array, iv: Uint8Array) => {
  const c = createCipheriv('aes-256-cbc', key, iv);
  return Buffer.concat([c.update(plain), c.final()]);
};
const nodeDecrypt = (data: Uint8Array, key: Uint8Array, iv: Uint8Array) => {
  const d = createDecipheriv('aes-256-cbc', key, iv);
  return Buffer.concat([d.update(data), d.final()]);
};

const countingDeciphers = (fn: () => void): number => countingNodeCrypto(['createDecipheriv'], fn);

test.serial('the plaintext of every length from 0 to 100 bytes and of 4 KiB, keys interleaved past the kept ones', (t) => {
  // 100 keys used in turn: more than the decipher keeps, so some are made again, others reused.
  const keys = Array.from({ length: 100 }, () => randomBytes(32));
  const lengths = [...Array.from({ length: 101 }, (_, i) => i), 4096, 4097];
  for (let round = 0; round < 3; round++) {
    for (const [i, length] of lengths.entries()) {
      const key = keys[(i * 7 + round) % keys.length]!;
      const iv = randomBytes(16);
      const plain = randomBytes(length);
      const data = encrypt(plain, key, iv);
      const ours = aes256CbcDecrypt(data, key, iv);
      t.deepEqual(ours, plain, `length ${length}, round ${round}`);
      t.deepEqual(ours, nodeDecrypt(data, key, iv));
      t.not(ours.buffer, data.buffer, 'never the input decrypted in place');
    }
  }
});

test.serial('Uint8Array views at an offset are read where they point', (t) => {
  const key = randomBytes(32);
  const iv = randomBytes(16);
  const plain = Buffer.from('a mutation of the app state, as the phone encrypted it');
  const data = encrypt(plain, key, iv);
  const host = new Uint8Array(3 + 32 + 16 + data.length);
  host.set(key, 3);
  host.set(iv, 35);
  host.set(data, 51);
  t.deepEqual(aes256CbcDecrypt(host.subarray(51), host.subarray(3, 35), host.subarray(35, 51)), plain);
});

test.serial('refusals: createDecipheriv refuses the same inputs, and a refused input does not spoil the next decryption with that key', (t) => {
  const key = randomBytes(32);
  const iv = randomBytes(16);
  const plain = randomBytes(40);
  const data = encrypt(plain, key, iv);
  const both = (what: string, d: Uint8Array, k: Uint8Array = key, v: Uint8Array = iv) => {
    t.throws(() => nodeDecrypt(d, k, v), undefined, `node refuses ${what}`);
    t.throws(() => aes256CbcDecrypt(d, k, v), undefined, `refused: ${what}`);
    t.deepEqual(aes256CbcDecrypt(data, key, iv), plain, `after ${what}`);
  };
  both('an empty input', Buffer.alloc(0));
  both('a partial block', data.subarray(0, 20));
  both('a whole block and a byte', data.subarray(0, 33));
  both('a key of 16 bytes', data, randomBytes(16));
  both('a key of 33 bytes', data, randomBytes(33));
  both('an IV of 12 bytes', data, key, randomBytes(12));
  // Bad paddings: the last byte 0, 17, or a byte of the padding that differs. Made by encrypting
  // chosen last blocks without padding.
  const raw = (last: Buffer) => {
    const c = createCipheriv('aes-256-cbc', key, iv).setAutoPadding(false);
    return Buffer.concat([c.update(Buffer.concat([randomBytes(16), last])), c.final()]);
  };
  both('a padding byte of 0', raw(Buffer.concat([randomBytes(15), Buffer.from([0])])));
  both('a padding byte of 17', raw(Buffer.concat([randomBytes(15), Buffer.from([17])])));
  both('a padding whose bytes differ', raw(Buffer.concat([randomBytes(12), Buffer.from([4, 3, 4, 4])])));
  // A whole block of padding, and padding of 1, are accepted.
  t.deepEqual(aes256CbcDecrypt(raw(Buffer.alloc(16, 16)), key, iv).length, 16);
  t.deepEqual(aes256CbcDecrypt(raw(Buffer.concat([Buffer.alloc(15, 9), Buffer.from([1])])), key, iv).subarray(16), Buffer.alloc(15, 9));
});

test.serial("installed, Baileys' aesDecrypt and aesDecryptWithIV give createDecipheriv's bytes and make no Decipher object (patches/ makes them ask the gateway)", (t) => {
  const inputs = Array.from({ length: 40 }, (_, i) => {
    const key = randomBytes(32);
    const iv = randomBytes(16);
    const plain = randomBytes(i * 11);
    return { key, iv, plain, data: encrypt(plain, key, iv) };
  });
  const g = globalThis as Record<symbol, unknown>;
  const before = g[BAILEYS_AES_CBC_KEY];
  delete g[BAILEYS_AES_CBC_KEY];
  try {
    t.true(countingDeciphers(() => inputs.forEach(({ key, iv, data }) => aesDecryptWithIV(data, key, iv))) > 0, "the counter sees Baileys' own objects when nothing is installed");
    installBaileysAes();
    const got: Buffer[] = [];
    const prefixed: Buffer[] = [];
    const made = countingDeciphers(() => {
      for (const { key, iv, data } of inputs) {
        got.push(aesDecryptWithIV(data, key, iv));
        prefixed.push(aesDecrypt(Buffer.concat([iv, data]), key));
      }
    });
    // One block decipher a key at most, none a message: 40 keys, 80 decryptions.
    t.true(made <= inputs.length, `${made} Decipher objects for ${inputs.length * 2} decryptions`);
    t.deepEqual(got, inputs.map((i) => i.plain));
    t.deepEqual(prefixed, inputs.map((i) => i.plain));
    const again = countingDeciphers(() => inputs.slice(-10).forEach(({ key, iv, data }) => aesDecryptWithIV(data, key, iv)));
    t.is(again, 0, 'a key decrypted with lately: no object at all');
    t.throws(() => aesDecrypt(Buffer.concat([inputs[1]!.iv, inputs[1]!.data.subarray(0, 5)]), inputs[1]!.key));
  } finally {
    if (before === undefined) delete g[BAILEYS_AES_CBC_KEY];
    else g[BAILEYS_AES_CBC_KEY] = before;
  }
});
