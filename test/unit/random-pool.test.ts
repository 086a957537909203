import test from 'ava';
import { createHook } from 'node:async_hooks';
import nodeCrypto from 'node:crypto';
import { generateMessageIDV2 } from '@whiskeysockets/baileys';
import { installRandomPool, pooledRandomBytes } from '../../src/domain/random-pool.js';

// Issue 26 item 3 (no stall while phones pair): small random byte strings from a pool instead of a
// native job object a call (each one a weak-handle callback in a collection's pause; Baileys makes
// five to six a message it sends). The rule: Buffers of the size asked, each with an ArrayBuffer of
// its own, never the same bytes twice, Node's own function for what the pool does not serve, and
// Baileys' `import { randomBytes } from 'crypto'` served by the pool once installed.
// Serial: the async_hooks counter is process-wide.

/** RANDOMBYTESREQUEST jobs made (async_hooks' init) while `fn` runs. */
function countingJobs(fn: () => void): number {
  let jobs = 0;
  const hook = createHook({ init: (_id, type) => void (type === 'RANDOMBYTESREQUEST' && jobs++) }).enable();
  try {
    fn();
  } finally {
    hook.disable();
  }
  return jobs;
}

test.serial('sizes 0 to 256: the size asked, an ArrayBuffer of its own, no two alike, ~one job per 8 KiB handed out', (t) => {
  const seen = new Set<string>();
  let bytes = 0;
  const jobs = countingJobs(() => {
    for (let round = 0; round < 4; round++) {
      for (let size = 0; size <= 256; size++) {
        const b = pooledRandomBytes(size);
        t.is(b.length, size);
        t.is(b.buffer.byteLength, size, 'not a slice of a shared pool');
        if (size >= 16) {
          const hex = b.toString('hex');
          t.false(seen.has(hex), `bytes handed out twice (size ${size})`);
          seen.add(hex);
        }
        bytes += size;
      }
    }
  });
  t.true(jobs <= Math.ceil(bytes / 8192) + 1, `${jobs} jobs for ${bytes} bytes`);
  // Not all zero, nor all one value: the pool is filled, and wiped only behind what was handed out.
  const big = Buffer.concat(Array.from({ length: 64 }, () => pooledRandomBytes(32)));
  t.true(new Set(big).size > 200, 'bytes look random');
});

test.serial("larger, asynchronous and odd requests go to Node's randomBytes with its answers and refusals", async (t) => {
  t.is(pooledRandomBytes(4096).length, 4096);
  const viaCallback = await new Promise<Buffer>((resolve, reject) => pooledRandomBytes(16, (err, buf) => (err ? reject(err) : resolve(buf))));
  t.is(viaCallback.length, 16);
  const theirs = t.throws(() => nodeCrypto.randomBytes(-1));
  const ours = t.throws(() => pooledRandomBytes(-1));
  t.is(ours?.message, theirs?.message);
  t.is(pooledRandomBytes(1.5).length, nodeCrypto.randomBytes(1.5).length, 'a fraction: as Node answers it');
});

test.serial("installed, Baileys' message ids come from the pool (its `import { randomBytes } from 'crypto'`)", (t) => {
  const before = countingJobs(() => {
    for (let i = 0; i < 100; i++) generateMessageIDV2();
  });
  t.true(before >= 100, `${before} jobs before install`);
  installRandomPool();
  installRandomPool(); // idempotent
  const ids = new Set<string>();
  const after = countingJobs(() => {
    for (let i = 0; i < 1000; i++) ids.add(generateMessageIDV2());
  });
  t.true(after <= 3, `${after} jobs for 1,000 message ids`);
  t.is(ids.size, 1000);
  t.is(nodeCrypto.randomBytes, pooledRandomBytes as unknown as typeof nodeCrypto.randomBytes);
});
