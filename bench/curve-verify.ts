/**
 * `node --import=tsx bench/curve-verify.ts`: what the sound check of WhatsApp's certificate chain
 * costs (issue 21 item 2). Times 1,000 XEdDSA verifications through the gateway's check
 * (src/connection/baileys/xeddsa.ts: libsignal's curve25519-js), accepted and refused, and 1,000
 * repeats answered by the cache of accepted inputs (verify-cache.ts). A login checks two
 * signatures (intermediate, leaf), so an uncached login pays two. For comparison, Baileys rc14's own
 * `Curve.verify`, which runs the same verification and ignores its answer. Not part of `npm run bench`: a
 * figure for the commit message and the README, printed as one JSON line.
 */
import { Curve } from '@whiskeysockets/baileys';
import { memoizeVerify } from '../src/connection/baileys/verify-cache.js';
import { verifyXEdDSA } from '../src/connection/baileys/xeddsa.js';

const N = 1000;
const key = Curve.generateKeyPair();
// About the size of an encoded NoiseCertificate.Details (serial, issuer serial, 32-byte key, two times).
const message = Buffer.alloc(60, 7);
const signature = Curve.sign(key.private, message);
const wrong = Buffer.from(signature);
wrong[0]! ^= 1;

function time(run: () => boolean): { ms: number; trueCount: number } {
  let trueCount = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < N; i++) if (run()) trueCount++;
  return { ms: Number(process.hrtime.bigint() - started) / 1e6, trueCount };
}

for (let i = 0; i < 20; i++) verifyXEdDSA(key.public, message, signature); // warm-up
const accepted = time(() => verifyXEdDSA(key.public, message, signature));
const refused = time(() => verifyXEdDSA(key.public, message, wrong));
// Baileys rc14's own Curve.verify (not installed over here): the same verification, answer ignored.
const rc14 = time(() => Curve.verify(key.public, message, signature));
const cachedVerify = memoizeVerify(verifyXEdDSA);
cachedVerify(key.public, message, signature);
const cached = time(() => cachedVerify(key.public, message, signature));
if (accepted.trueCount !== N || refused.trueCount !== 0 || cached.trueCount !== N) throw new Error('wrong answers');

const round = (x: number): number => Math.round(x * 1000) / 1000;
console.log(
  JSON.stringify({
    verifications: N,
    accepted_ms_each: round(accepted.ms / N),
    refused_ms_each: round(refused.ms / N),
    rc14_unsound_ms_each: round(rc14.ms / N),
    uncached_login_ms: round((2 * accepted.ms) / N),
    cached_ms_each: round(cached.ms / N),
  }),
);
