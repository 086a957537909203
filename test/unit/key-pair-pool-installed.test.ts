/**
 * Pairing without stalls (issue 26 item 3): the daemon's Baileys connection module installs the
 * key-pair pool (src/connection/baileys/key-pair-pool.ts) when it loads. Its own file (its own ava
 * worker): nothing else here installs a pool, so a pool found after the import is the module's.
 */
import test from 'ava';
import { Curve } from '@whiskeysockets/baileys';
import { installedKeyPairPool } from '../../src/connection/baileys/key-pair-pool.js';

test("loading the Baileys connection installs the pool, and Baileys' Curve takes from it", async (t) => {
  t.is(installedKeyPairPool(), null, 'none before the connection module loads');
  await import('../../src/connection/baileys/connection.js');
  const pool = installedKeyPairPool();
  t.not(pool, null);
  // Primed at install: filling before anything takes from it (the first pairing finds it full).
  while (pool!.available === 0) await new Promise((r) => setTimeout(r, 5));
  t.true(pool!.available > 0, 'key pairs made before the first take');
  await pool!.filled();
  const before = pool!.available;
  Curve.generateKeyPair();
  t.is(pool!.available, before - 1);
});
