import { createRequire } from 'node:module';

/**
 * Loads a module as Baileys resolves it: libsignal (and the curve25519-js it loads) are Baileys'
 * dependencies, not ours, so this is the very copy Baileys signs, checks and agrees with, not a
 * second one. `from` resolves a module relative to another one found that way (libsignal's own
 * curve25519-js). CommonJS modules are cached: every caller gets the one object.
 */
export function requireFromBaileys(id: string, from?: string): unknown {
  const fromBaileys = createRequire(import.meta.resolve('@whiskeysockets/baileys'));
  return from === undefined ? fromBaileys(id) : createRequire(fromBaileys.resolve(from))(id);
}
