/**
 * The pairing QR's PNG (src/instances/qr-image.ts): CPU time and bytes allocated for one drawing,
 * ours against the qrcode library's own `toDataURL` (default segmentation, pngjs), in the same
 * process, alternating rounds. Allocation is read from V8's sampling heap profiler with the objects
 * the collector has freed counted too: garbage is the cost that matters while many phones pair.
 *
 * Run: `node --import=tsx bench/qr-image.ts` (BENCH_QR_N drawings a round, default 200).
 */
import { Session } from 'node:inspector/promises';
import QRCode from 'qrcode';
import { qrPng } from '../src/instances/qr-image.js';

interface SamplingNode { selfSize: number; children: SamplingNode[] }

const N = Number(process.env.BENCH_QR_N ?? 200);
const session = new Session();
session.connect();

/** A QR text of Baileys' shape (ref, noise key, identity key, adv secret, platform), new each time. */
function text(i: number): string {
  const b64 = (n: number) => Buffer.from(Array.from({ length: n }, (_, k) => (i * 131 + k * 17) & 0xff)).toString('base64');
  return `2@${b64(120)},${b64(32)},${b64(32)},${b64(32)},1`;
}

async function measure(name: string, draw: (qr: string) => Promise<unknown>, round: number): Promise<{ ms: number; kb: number }> {
  await session.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  const t0 = performance.now();
  for (let i = 0; i < N; i++) await draw(text(round * N + i));
  const ms = (performance.now() - t0) / N;
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as { profile: { head: SamplingNode } };
  const sum = (n: SamplingNode): number => n.selfSize + n.children.reduce((s, c) => s + sum(c), 0);
  const kb = sum(profile.head) / N / 1024;
  console.log(`${name}: ${ms.toFixed(2)} ms and ${kb.toFixed(0)} KB allocated a drawing (${N} drawings)`);
  return { ms, kb };
}

const library = (qr: string) => QRCode.toDataURL(qr, { errorCorrectionLevel: 'L', margin: 2, width: 264 });
const ours = (qr: string) => Promise.resolve(`data:image/png;base64,${qrPng(qr).toString('base64')}`);
// Warm both up, then three rounds each, alternating.
await library(text(-1));
await ours(text(-2));
const results: Record<string, Array<{ ms: number; kb: number }>> = { library: [], ours: [] };
for (let round = 0; round < 3; round++) {
  results.library!.push(await measure('qrcode toDataURL', library, round));
  results.ours!.push(await measure('qr-image.ts', ours, round));
}
const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const lib = { ms: median(results.library!.map((r) => r.ms)), kb: median(results.library!.map((r) => r.kb)) };
const own = { ms: median(results.ours!.map((r) => r.ms)), kb: median(results.ours!.map((r) => r.kb)) };
console.log(JSON.stringify({ qr_library_ms: +lib.ms.toFixed(2), qr_ours_ms: +own.ms.toFixed(2), qr_library_kb: Math.round(lib.kb), qr_ours_kb: Math.round(own.kb), qr_time_ratio: +(own.ms / lib.ms).toFixed(3), qr_alloc_ratio: +(own.kb / lib.kb).toFixed(3) }));
session.disconnect();
