/**
 * AES-256-GCM of one message (src/domain/aes-gcm.ts) against Node's `createCipheriv('aes-256-gcm')`
 * a message, as Baileys seals and opens its Noise frames: the same key for every message, a
 * counter IV, no additional data. Sizes of 100 bytes (a receipt, a short text), 1 KiB (the largest
 * this module seals itself) and 64 KiB (Node's GCM either way since the module hands it over;
 * shown for what writing GHASH in JavaScript would cost there). Alternating rounds in one process;
 * the figure is the median of the rounds, in µs a message.
 *
 * Run: `node --import=tsx bench/aes-gcm.ts` (BENCH_AES_ROUNDS, default 5).
 */
import { createCipheriv, randomBytes } from 'node:crypto';
import { aes256GcmDecrypt, aes256GcmEncrypt } from '../src/domain/aes-gcm.js';

const ROUNDS = Number(process.env.BENCH_AES_ROUNDS ?? 5);
const key = randomBytes(32);
const iv = Buffer.alloc(12);
const aad = Buffer.alloc(0);
const nodeSeal = (plain: Buffer) => {
  const c = createCipheriv('aes-256-gcm', key, iv);
  c.setAAD(aad);
  return Buffer.concat([c.update(plain), c.final(), c.getAuthTag()]);
};

const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const size of [100, 1024]) {
  const plain = randomBytes(size);
  const sealed = nodeSeal(plain);
  const n = 20_000;
  const times = { node: [] as number[], seal: [] as number[], open: [] as number[] };
  for (let r = 0; r < ROUNDS; r++) {
    let t = performance.now();
    for (let i = 0; i < n; i++) nodeSeal(plain);
    times.node.push(((performance.now() - t) / n) * 1000);
    t = performance.now();
    for (let i = 0; i < n; i++) aes256GcmEncrypt(plain, key, iv, aad);
    times.seal.push(((performance.now() - t) / n) * 1000);
    t = performance.now();
    for (let i = 0; i < n; i++) aes256GcmDecrypt(sealed, key, iv, aad);
    times.open.push(((performance.now() - t) / n) * 1000);
  }
  console.log(`${size} bytes: Node ${median(times.node).toFixed(1)} µs, ours seal ${median(times.seal).toFixed(1)} µs, open ${median(times.open).toFixed(1)} µs (median of ${ROUNDS} rounds of ${n})`);
}
{
  // The GHASH of the module for 64 KiB: the module gives such messages to Node, so its own path is
  // timed here through a 1 KiB message repeated 64 times (the cost grows with the blocks).
  const plain = randomBytes(65536);
  const block = plain.subarray(0, 1024);
  const n = 200;
  const node: number[] = [];
  const ours: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    let t = performance.now();
    for (let i = 0; i < n; i++) nodeSeal(plain);
    node.push(((performance.now() - t) / n) * 1000);
    t = performance.now();
    for (let i = 0; i < n; i++) for (let k = 0; k < 64; k++) aes256GcmEncrypt(block, key, iv, aad);
    ours.push(((performance.now() - t) / n) * 1000);
  }
  console.log(`65536 bytes: Node ${median(node).toFixed(1)} µs, ours (as 64 messages of 1 KiB) ${median(ours).toFixed(1)} µs (median of ${ROUNDS} rounds of ${n})`);
}
