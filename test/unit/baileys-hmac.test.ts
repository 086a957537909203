import test from 'ava';
import nodeCrypto, { randomBytes } from 'node:crypto';
import { hmacSign } from '@whiskeysockets/baileys';
import { hmac } from '../../src/domain/hmac.js';
import { countingNodeCrypto } from '../helpers/count-node-crypto.js';
import { BAILEYS_HMAC_KEY, installBaileysHmac } from '../../src/connection/baileys/app-state-hmac.js';

// Issue 26 item 3 (no stall while phones pair): Baileys' HMACs (two an app-state mutation) without a
// native Hmac object each, whose weak-handle callbacks ran in every full collection's final pause.
// The rule: the same bytes as createHmac for every input, and no Hmac object made by Baileys'
// `hmacSign` once installed (patches/ makes it ask the installed function). That app-state decoding
// through it still verifies every MAC and reaches the double's LT hash is proven by
// test/unit/baileys-app-state-slices.test.ts. Serial: the createHmac counter is process-wide.

const countingHmacs = (fn: () => void): number => countingNodeCrypto(['createHmac'], fn);

test.serial('HMAC-SHA256 and HMAC-SHA512 from two hashes equal createHmac for keys shorter than, as long as and longer than a block', (t) => {
  for (const algorithm of ['sha256', 'sha512']) {
    for (const keyLength of [0, 1, 32, 63, 64, 65, 127, 128, 129, 300]) {
      for (const dataLength of [0, 1, 33, 64, 128, 1000]) {
        const key = randomBytes(keyLength);
        const data = randomBytes(dataLength);
        t.deepEqual(hmac(algorithm, key, data), nodeCrypto.createHmac(algorithm, key).update(data).digest(), `${algorithm}, key ${keyLength}, data ${dataLength}`);
      }
    }
  }
});

test.serial('another hash, or a key or data that is not bytes, goes to createHmac and gives its answer', (t) => {
  const key = randomBytes(20);
  const made = countingHmacs(() => {
    t.deepEqual(hmac('sha1', key, Buffer.from('x')), nodeCrypto.createHmac('sha1', key).update('x').digest());
    t.deepEqual(hmac('sha256', 'a string key', Buffer.from('x')), nodeCrypto.createHmac('sha256', 'a string key').update('x').digest());
    t.deepEqual(hmac('sha256', key, 'string data'), nodeCrypto.createHmac('sha256', key).update('string data').digest());
  });
  t.true(made >= 3);
});

test.serial("installed, Baileys' hmacSign gives createHmac's bytes and makes no Hmac object (patches/ makes it ask the gateway)", (t) => {
  const inputs = Array.from({ length: 40 }, (_, i) => ({ key: randomBytes(i % 3 === 0 ? 64 : 32), data: randomBytes(i * 17), variant: (i % 2 ? 'sha512' : 'sha256') as 'sha256' | 'sha512' }));
  const expected = inputs.map(({ key, data, variant }) => nodeCrypto.createHmac(variant, key).update(data).digest());
  const g = globalThis as Record<symbol, unknown>;
  const before = g[BAILEYS_HMAC_KEY];
  delete g[BAILEYS_HMAC_KEY];
  try {
    t.true(countingHmacs(() => inputs.forEach(({ key, data, variant }) => hmacSign(data, key, variant))) > 0, "the counter sees Baileys' own objects when nothing is installed");
    installBaileysHmac();
    const got: Buffer[] = [];
    const made = countingHmacs(() => inputs.forEach(({ key, data, variant }) => got.push(hmacSign(data, key, variant))));
    t.is(made, 0, 'no Hmac object once installed');
    t.deepEqual(got, expected);
    t.deepEqual(hmacSign(Buffer.from('abc'), Buffer.alloc(32, 1)), nodeCrypto.createHmac('sha256', Buffer.alloc(32, 1)).update('abc').digest(), 'SHA-256 by default');
  } finally {
    if (before === undefined) delete g[BAILEYS_HMAC_KEY];
    else g[BAILEYS_HMAC_KEY] = before;
  }
});
