import { syncBuiltinESMExports } from 'node:module';
import nodeCrypto from 'node:crypto';

type Maker = 'createHmac' | 'createHash' | 'createCipheriv' | 'createDecipheriv';

/**
 * How many times `fn` called the named node:crypto makers, whether through the module object
 * (`require('crypto').createHmac`: libsignal) or a named import (`import { createHmac } from 'crypto'`:
 * Baileys, whose live bindings syncBuiltinESMExports updates). Process-wide while it runs: callers
 * run serially.
 */
export function countingNodeCrypto(makers: readonly Maker[], fn: () => void): number {
  const originals = Object.fromEntries(makers.map((m) => [m, nodeCrypto[m]])) as Record<Maker, (...a: unknown[]) => unknown>;
  let made = 0;
  for (const m of makers) (nodeCrypto as unknown as Record<Maker, unknown>)[m] = (...a: unknown[]) => (made++, originals[m](...a));
  syncBuiltinESMExports();
  try {
    fn();
  } finally {
    Object.assign(nodeCrypto, originals);
    syncBuiltinESMExports();
  }
  return made;
}
