// Diagnostic, not part of `npm run bench`: the CPU of one Signal signature (what Baileys does twice
// while a phone pairs, on the main thread), curve25519-js (libsignal's) against @noble/curves
// (src/connection/baileys/curve-sign.ts), alternated in rounds, same keys and messages.
// `node --import=tsx bench/curve-sign.ts`
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { curve25519Sign } from '../src/connection/baileys/curve-sign.js';

const fromLibsignal = createRequire(createRequire(import.meta.url).resolve('libsignal/src/curve.js'));
const curveJs = fromLibsignal('curve25519-js') as { sign(k: Uint8Array, m: Uint8Array): Uint8Array };
const keys = Array.from({ length: 50 }, () => ({ k: randomBytes(32), m: randomBytes(200) }));
const time = (sign: (k: Uint8Array, m: Uint8Array) => Uint8Array): number => {
  const t = performance.now();
  for (const { k, m } of keys) sign(k, m);
  return (performance.now() - t) / keys.length;
};
time((k, m) => curveJs.sign(k, m));
time(curve25519Sign);
const js: number[] = [];
const noble: number[] = [];
for (let round = 0; round < 4; round++) {
  js.push(time((k, m) => curveJs.sign(k, m)));
  noble.push(time(curve25519Sign));
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`ms a signature, median of 4 rounds of 50: curve25519-js ${median(js).toFixed(2)}, @noble/curves ${median(noble).toFixed(3)} (${(median(js) / median(noble)).toFixed(0)}x)`);
