/**
 * Pairing and memory (issue 26 items 2 and 3): one-time pre-keys are kept as their 64 bytes in a
 * latin1 string (src/connection/baileys/key-text.ts), anything else as JSON. Guards: every key pair
 * comes back byte for byte whatever its bytes (a first byte of `{` too), the saved JSON is what
 * Baileys' replacer writes, and a value of another shape keeps its JSON and comes back equal.
 */
import { randomBytes } from 'node:crypto';
import test from 'ava';
import { BufferJSON } from '@whiskeysockets/baileys';
import { jsonText, keyPairText } from '../../src/connection/baileys/key-text.js';

test('a key pair is 64 latin1 characters and comes back byte for byte, a new object each time, its JSON what the replacer writes', (t) => {
  for (let i = 0; i < 500; i++) {
    const pair = { private: randomBytes(32), public: randomBytes(32) };
    if (i === 0) pair.private[0] = '{'.charCodeAt(0); // looks like JSON's first character
    if (i === 1) pair.private.fill(0);
    if (i === 2) pair.public.fill(255);
    const text = keyPairText.encode(pair);
    t.is(text.length, 64);
    const back = keyPairText.decode(text) as { private: Buffer; public: Buffer };
    t.true(Buffer.isBuffer(back.private) && back.private.equals(pair.private));
    t.true(Buffer.isBuffer(back.public) && back.public.equals(pair.public));
    t.not(keyPairText.decode(text), back);
    t.is(keyPairText.json(text), JSON.stringify(pair, BufferJSON.replacer));
  }
});

test('a value of another shape keeps its JSON and comes back equal', (t) => {
  const others: unknown[] = [
    { public: randomBytes(32), private: randomBytes(32) }, // the other key order: the file keeps it
    { private: randomBytes(32), public: randomBytes(33) },
    { private: randomBytes(32), public: randomBytes(32), extra: 1 },
    { private: 'x'.repeat(32), public: randomBytes(32) },
    { p: 'x'.repeat(56) }, // JSON of exactly 64 characters: kept with a space, never read as a packed pair
  ];
  t.is(JSON.stringify(others.at(-1)).length, 64);
  for (const value of others) {
    const text = keyPairText.encode(value);
    t.not(text.length, 64);
    t.is(keyPairText.json(text), JSON.stringify(value, BufferJSON.replacer));
    t.deepEqual(JSON.stringify(keyPairText.decode(text), BufferJSON.replacer), JSON.stringify(value, BufferJSON.replacer));
  }
  // Uint8Arrays, not Buffers: packed too, read back as Buffers, the same JSON.
  const views = { private: new Uint8Array(32).fill(7), public: new Uint8Array(32).fill(9) };
  const text = keyPairText.encode(views);
  t.is(text.length, 64);
  t.true(Buffer.isBuffer((keyPairText.decode(text) as { private: unknown }).private));
  t.is(keyPairText.json(text), JSON.stringify(views, BufferJSON.replacer));
  t.is(jsonText.json(jsonText.encode({ a: 1 })), '{"a":1}');
});
