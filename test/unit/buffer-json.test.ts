import test from 'ava';
import { randomBytes } from 'node:crypto';
import { BufferJSON } from '@whiskeysockets/baileys';
import { isDeepStrictEqual } from 'node:util';
import { reviveBuffers } from '../../src/connection/baileys/buffer-json.js';

// Issue 26 item 2 (all connected within 120 s of a restart): auth state is parsed, then revived by
// one walk instead of JSON.parse's reviver. The rule: the very value Baileys' reviver gives, for
// every shape a stored session has (and the odd ones it might).

const revived = (text: string): unknown => reviveBuffers(JSON.parse(text));

function sample(depth: number): unknown {
  const r = Math.random();
  if (depth > 3 || r < 0.25) return [1, 'a', true, null, 2.5, -3][Math.floor(Math.random() * 6)];
  if (r < 0.4) return randomBytes(Math.floor(Math.random() * 40));
  if (r < 0.5) return Object.fromEntries(Array.from({ length: 1 + Math.floor(Math.random() * 4) }, (_, i) => [String(i), Math.floor(Math.random() * 256)]));
  if (r < 0.6) return Array.from({ length: Math.floor(Math.random() * 4) }, () => sample(depth + 1));
  return Object.fromEntries(Array.from({ length: Math.floor(Math.random() * 5) }, (_, i) => [`k${i}`, sample(depth + 1)]));
}

test('one walk after JSON.parse gives what JSON.parse with BufferJSON.reviver gives: 500 random documents', (t) => {
  for (let i = 0; i < 500; i++) {
    const text = JSON.stringify({ creds: sample(0), keys: { session: sample(0), 'pre-key': sample(0) } }, BufferJSON.replacer);
    const expected: unknown = JSON.parse(text, BufferJSON.reviver);
    t.true(isDeepStrictEqual(revived(text), expected), text.slice(0, 300));
  }
});

test('the edge shapes: numeric-key objects with a non-number, empty objects, keys like "12abc", an own __proto__, non-string data', (t) => {
  const cases = [
    '{"0":1,"1":2}',
    '{"0":1,"1":"x"}',
    '{}',
    '[]',
    '{"12abc":7,"3":1}',
    '{"a":{"type":"Buffer","data":"AQID"},"b":[{"type":"Buffer","data":"AA=="}]}',
    '{"type":"Buffer","data":[1,2,3]}',
    '{"type":"Buffer","data":"AQ==","extra":1}',
    '{"__proto__":{"type":"Buffer","data":"AQI="},"x":1}',
    '{"n":{"0":{"0":1}}}',
  ];
  for (const text of cases) {
    const expected: unknown = JSON.parse(text, BufferJSON.reviver);
    const got = revived(text);
    t.true(isDeepStrictEqual(got, expected), text);
  }
  const proto = revived('{"__proto__":{"type":"Buffer","data":"AQI="}}') as object;
  t.is(Object.getPrototypeOf(proto), Object.prototype, 'an own "__proto__" stays data');
});
