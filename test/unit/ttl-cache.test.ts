import test from 'ava';
import { TtlCache, socketCaches } from '../../src/connection/baileys/ttl-cache.js';

// Rule: Baileys' per-socket caches without a timer (ttl-cache.ts) keep NodeCache's meaning for
// Baileys (an entry lives ttl after its last set, values kept as given, del and flushAll) and stay
// bounded: expired entries go at the next set, and never more than `capacity` are kept.

test('an entry lives ttl after its last set; a get never returns an expired one', (t) => {
  let now = 0;
  const cache = new TtlCache(1000, 10, () => now);
  const value = { devices: [0, 1] };
  cache.set('a', value);
  t.is(cache.get('a'), value, 'kept as given (no clone)');
  now = 999;
  t.is(cache.get('a'), value);
  cache.set('a', value);
  now = 1500;
  t.is(cache.get('a'), value, 'a set renews the entry');
  now = 1999;
  t.is(cache.get('a'), undefined);
  t.is(cache.size, 0, 'the expired entry was dropped at the get');
  t.is(cache.get('missing'), undefined);
});

test('a set drops the expired entries at the front; capacity bounds the rest, oldest first', (t) => {
  let now = 0;
  const cache = new TtlCache(100, 3, () => now);
  cache.set('a', 1);
  now = 10;
  cache.set('b', 2);
  now = 105;
  cache.set('c', 3);
  t.is(cache.size, 2, 'a expired and went at the set');
  cache.set('d', 4);
  cache.set('e', 5);
  t.is(cache.size, 3);
  t.is(cache.get('b'), undefined, 'the oldest went past the capacity');
  t.deepEqual([cache.get('c'), cache.get('d'), cache.get('e')], [3, 4, 5]);
  t.is(cache.del('d'), 1);
  t.is(cache.del('d'), 0);
  cache.flushAll();
  t.is(cache.size, 0);
  t.throws(() => new TtlCache(100, 0), { instanceOf: RangeError });
});

test('mget and mset, which Baileys uses for device lists when they are there', async (t) => {
  let now = 0;
  const cache = new TtlCache(100, 10, () => now);
  cache.mset([{ key: 'u1', value: ['0'] }, { key: 'u2', value: ['0', '3'] }]);
  t.deepEqual(await cache.mget(['u1', 'u2', 'u3']), { u1: ['0'], u2: ['0', '3'], u3: undefined });
  now = 200;
  t.deepEqual(await cache.mget(['u1']), { u1: undefined });
});

test('each socket gets caches of its own, with Baileys’ lifetimes', (t) => {
  const a = socketCaches();
  const b = socketCaches();
  t.not(a.userDevicesCache, b.userDevicesCache);
  for (const name of ['msgRetryCounterCache', 'callOfferCache', 'userDevicesCache', 'placeholderResendCache'] as const) t.true(a[name] instanceof TtlCache, name);
});
