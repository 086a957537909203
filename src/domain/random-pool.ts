import nodeCrypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';

/** The largest request served from the pool; larger ones (and every asynchronous one) go to Node. */
const LARGEST = 256;
const POOL_BYTES = 8192;

const originalRandomBytes = nodeCrypto.randomBytes;
let pool: Buffer | null = null;
let offset = POOL_BYTES;

/**
 * `crypto.randomBytes(size)` for small synchronous requests, served from a pool that one
 * `randomFillSync` fills with 8 KiB at a time (Node's `randomUUID` keeps such a pool too). Each byte
 * is handed out once, copied into a Buffer with its own ArrayBuffer, and wiped from the pool.
 *
 * Why: every synchronous `randomBytes` call makes a native job object (RANDOMBYTESREQUEST in
 * async_hooks), freed by a weak-handle callback in a garbage collection's pause, most of them in a
 * full collection's final pause. Baileys calls it five to six times a message it sends (message
 * ids, message secrets, padding) and more while a phone pairs: 23,854 of them while 200 phones
 * paired and one instance sent 50 messages a second for 100 s, the most of any native object the
 * daemon made (async_hooks' init counted by type).
 */
export function pooledRandomBytes(size: number): Buffer;
export function pooledRandomBytes(size: number, callback: (err: Error | null, buf: Buffer) => void): void;
export function pooledRandomBytes(size: number, callback?: (err: Error | null, buf: Buffer) => void): Buffer | void {
  if (callback !== undefined || !Number.isInteger(size) || size < 0 || size > LARGEST) {
    return (originalRandomBytes as (size: number, callback?: (err: Error | null, buf: Buffer) => void) => Buffer | void)(size, callback);
  }
  if (pool === null || offset + size > POOL_BYTES) {
    pool ??= Buffer.alloc(POOL_BYTES);
    nodeCrypto.randomFillSync(pool);
    offset = 0;
  }
  // A Buffer with an ArrayBuffer of its own, as Node's (never a slice of Buffer's shared pool:
  // code that reads `.buffer` whole gets exactly these bytes).
  const out = Buffer.allocUnsafeSlow(size);
  pool.copy(out, 0, offset, offset + size);
  pool.fill(0, offset, offset + size);
  offset += size;
  return out;
}

let installed = false;

/**
 * Puts `pooledRandomBytes` in place of node:crypto's `randomBytes` for the whole process: on the
 * module object (what `require('crypto').randomBytes` reads at each call: libsignal) and on the
 * live bindings of `import { randomBytes } from 'crypto'` (Baileys), through syncBuiltinESMExports.
 * Idempotent.
 */
export function installRandomPool(): void {
  if (installed) return;
  installed = true;
  nodeCrypto.randomBytes = pooledRandomBytes as typeof nodeCrypto.randomBytes;
  syncBuiltinESMExports();
}
