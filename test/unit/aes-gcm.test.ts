import test from 'ava';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { countingNodeCrypto } from '../helpers/count-node-crypto.js';
import { aesDecryptGCM, aesEncryptGCM } from '@whiskeysockets/baileys';
import { aes256GcmDecrypt, aes256GcmEncrypt } from '../../src/domain/aes-gcm.js';
import { BAILEYS_AES_GCM_DECRYPT_KEY, BAILEYS_AES_GCM_ENCRYPT_KEY, installBaileysAes } from '../../src/connection/baileys/baileys-aes.js';

// Issue 26 item 3 (no stall while phones pair): AES-256-GCM (every Noise frame of every WhatsApp
// connection) without a native Cipher object a message, each one a weak-handle callback in a
// collection's pause. The counter mode and GHASH are ours (the AES block stays OpenSSL's), so the
// rule is strict: Node's GCM bytes and tag for every length of plaintext and additional data, the
// message refused (never its plaintext) when any bit of ciphertext, tag, additional data, IV or key
// differs, and Baileys' aesEncryptGCM/aesDecryptGCM make no Cipher a message once installed
// (patches/). Every test through the protocol double runs real Baileys' Noise transport through it.
// Serial: the createCipheriv counter is process-wide.

const nodeSeal = (plain: Uint8Array, key: Uint8Array, iv: Uint8Array, aad: Uint8Array) => {
  const c = createCipheriv('aes-256-gcm', key, iv);
  c.setAAD(aad);
  return Buffer.concat([c.update(plain), c.final(), c.getAuthTag()]);
};
const nodeOpen = (sealed: Uint8Array, key: Uint8Array, iv: Uint8Array, aad: Uint8Array) => {
  const d = createDecipheriv('aes-256-gcm', key, iv);
  d.setAAD(aad);
  d.setAuthTag(sealed.subarray(sealed.length - 16));
  return Buffer.concat([d.update(sealed.subarray(0, sealed.length - 16)), d.final()]);
};

const countingCiphers = (fn: () => void): number => countingNodeCrypto(['createCipheriv', 'createDecipheriv'], fn);

test.serial("Node's ciphertext and tag for plaintexts of 0 to 100 bytes, 1 KiB either side (ours up to 1 KiB, Node's past it), 4 KiB and 64 KiB + 3, with additional data of 0 to 48 bytes", (t) => {
  const lengths = [...Array.from({ length: 101 }, (_, i) => i), 1023, 1024, 1025, 4096, 65539];
  const aadLengths = [0, 1, 15, 16, 17, 32, 48];
  let checked = 0;
  for (const [n, length] of lengths.entries()) {
    const key = randomBytes(32);
    const iv = randomBytes(12);
    const aad = randomBytes(aadLengths[n % aadLengths.length]!);
    const plain = randomBytes(length);
    const ours = aes256GcmEncrypt(plain, key, iv, aad);
    t.deepEqual(ours, nodeSeal(plain, key, iv, aad), `length ${length}, aad ${aad.length}`);
    t.deepEqual(aes256GcmDecrypt(ours, key, iv, aad), plain);
    checked++;
  }
  // The same key for many messages, as a Noise transport's (counter IVs): the kept state reused.
  const key = randomBytes(32);
  const iv = Buffer.alloc(12);
  for (let counter = 0; counter < 300; counter++) {
    iv.writeUInt32BE(counter, 8);
    const plain = randomBytes(counter % 70);
    const sealed = nodeSeal(plain, key, iv, Buffer.alloc(0));
    t.deepEqual(aes256GcmEncrypt(plain, key, iv, Buffer.alloc(0)), sealed);
    t.deepEqual(aes256GcmDecrypt(sealed, key, iv, Buffer.alloc(0)), plain);
    checked++;
  }
  t.is(checked, lengths.length + 300);
});

test.serial('any bit changed in the ciphertext, the tag, the additional data, the IV or the key: refused as Node refuses it, no plaintext', (t) => {
  const key = randomBytes(32);
  const iv = randomBytes(12);
  const aad = randomBytes(32);
  const plain = randomBytes(50);
  const sealed = nodeSeal(plain, key, iv, aad);
  const flip = (b: Buffer, bit: number) => {
    const c = Buffer.from(b);
    c[bit >> 3]! ^= 1 << (bit & 7);
    return c;
  };
  const refused = (what: string, s: Buffer, k: Buffer, v: Buffer, a: Buffer) => {
    const theirs = t.throws(() => nodeOpen(s, k, v, a), undefined, `node: ${what}`);
    const ours = t.throws(() => aes256GcmDecrypt(s, k, v, a), undefined, what);
    t.is(ours?.message, theirs?.message, what);
  };
  for (const bit of [0, 7, 8 * 49 + 7, 8 * 50, 8 * 65 + 7]) refused(`sealed bit ${bit}`, flip(sealed, bit), key, iv, aad);
  refused('aad bit 0', sealed, key, iv, flip(aad, 0));
  refused('aad bit 255', sealed, key, iv, flip(aad, 255));
  refused('aad longer', sealed, key, iv, Buffer.concat([aad, Buffer.alloc(1)]));
  refused('iv bit 95', sealed, key, flip(iv, 95), aad);
  refused('key bit 3', sealed, flip(key, 3), iv, aad);
  refused('tag cut', Buffer.concat([sealed.subarray(0, 50), sealed.subarray(51)]), key, iv, aad);
  // Still opens after all that (the kept state of `key` untouched by the refusals).
  t.deepEqual(aes256GcmDecrypt(sealed, key, iv, aad), plain);
});

test.serial("what this module does not do itself goes to Node's GCM: a 16-byte IV, a short message, a 16-byte key", (t) => {
  const key = randomBytes(32);
  const iv16 = randomBytes(16);
  const plain = randomBytes(40);
  const aad = randomBytes(5);
  const sealed = nodeSeal(plain, key, iv16, aad);
  t.deepEqual(aes256GcmEncrypt(plain, key, iv16, aad), sealed);
  t.deepEqual(aes256GcmDecrypt(sealed, key, iv16, aad), plain);
  t.throws(() => aes256GcmDecrypt(randomBytes(10), key, randomBytes(12), aad));
  t.throws(() => aes256GcmEncrypt(plain, randomBytes(16), randomBytes(12), aad));
});

test.serial('a key Buffer changed in place is not mistaken for the key it was', (t) => {
  const key = randomBytes(32);
  const iv = randomBytes(12);
  const plain = Buffer.from('the first key');
  t.deepEqual(aes256GcmEncrypt(plain, key, iv, Buffer.alloc(0)), nodeSeal(plain, key, iv, Buffer.alloc(0)));
  key[0]! ^= 0xff;
  t.deepEqual(aes256GcmEncrypt(plain, key, iv, Buffer.alloc(0)), nodeSeal(plain, key, iv, Buffer.alloc(0)));
});

test.serial("installed, Baileys' aesEncryptGCM/aesDecryptGCM give Node's bytes with one Cipher a key, none a message", (t) => {
  const g = globalThis as Record<symbol, unknown>;
  const before = [g[BAILEYS_AES_GCM_ENCRYPT_KEY], g[BAILEYS_AES_GCM_DECRYPT_KEY]] as const;
  delete g[BAILEYS_AES_GCM_ENCRYPT_KEY];
  delete g[BAILEYS_AES_GCM_DECRYPT_KEY];
  const encKey = randomBytes(32);
  const decKey = randomBytes(32);
  const frames = Array.from({ length: 100 }, (_, i) => {
    const iv = Buffer.alloc(12);
    iv.writeUInt32BE(i, 8);
    const plain = randomBytes(i * 3);
    return { iv, plain, sealed: nodeSeal(plain, encKey, iv, Buffer.alloc(0)), incoming: nodeSeal(plain, decKey, iv, Buffer.alloc(0)) };
  });
  try {
    t.true(countingCiphers(() => frames.forEach((f) => aesEncryptGCM(f.plain, encKey, f.iv, Buffer.alloc(0)))) >= frames.length, "the counter sees Baileys' own objects when nothing is installed");
    installBaileysAes();
    const sealed: Buffer[] = [];
    const opened: Buffer[] = [];
    const made = countingCiphers(() => {
      for (const f of frames) {
        sealed.push(aesEncryptGCM(f.plain, encKey, f.iv, Buffer.alloc(0)));
        opened.push(aesDecryptGCM(f.incoming, decKey, f.iv, Buffer.alloc(0)));
      }
    });
    t.true(made <= 2, `${made} Cipher objects for ${frames.length * 2} frames`);
    t.deepEqual(sealed, frames.map((f) => f.sealed));
    t.deepEqual(opened, frames.map((f) => f.plain));
    t.throws(() => aesDecryptGCM(frames[5]!.incoming, encKey, frames[5]!.iv, Buffer.alloc(0)), { message: 'Unsupported state or unable to authenticate data' });
  } finally {
    for (const [k, v] of [[BAILEYS_AES_GCM_ENCRYPT_KEY, before[0]], [BAILEYS_AES_GCM_DECRYPT_KEY, before[1]]] as const) {
      if (v === undefined) delete g[k];
      else g[k] = v;
    }
  }
});
