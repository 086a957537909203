/**
 * A first login's history sync decoded (src/connection/baileys/history-decode.ts): CPU time, bytes
 * allocated and bytes still held by the result, for the lean decoder against Baileys' generated
 * `proto.HistorySync.decode`, on the protocol double's realistic RECENT sync (195 chats, 1,975
 * messages), alternating rounds in one process. Allocation is read from V8's sampling heap
 * profiler with freed objects counted; what the result holds is the heap after a full collection
 * with the results of a round alive, less the heap before (the objects that live across
 * Baileys' awaits until the history set is emitted, and so survive scavenges while phones pair).
 *
 * Run: `node --expose-gc --import=tsx bench/history-decode.ts` (BENCH_HISTORY_N decodes a round, default 40).
 */
import { Session } from 'node:inspector/promises';
import { proto } from '@whiskeysockets/baileys';
import { decodeLeanHistorySync } from '../src/connection/baileys/history-decode.js';
import { addressBook, recentHistory, REALISTIC_ACCOUNT } from '../test/protocol-double/account-data.js';

interface SamplingNode { selfSize: number; children: SamplingNode[] }

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const N = Number(process.env.BENCH_HISTORY_N ?? 40);
const bytes = recentHistory(REALISTIC_ACCOUNT, addressBook(REALISTIC_ACCOUNT.contacts));
const session = new Session();
session.connect();

async function measure(name: string, decode: (b: Uint8Array) => unknown): Promise<{ ms: number; kb: number; heldKb: number }> {
  gc!();
  const before = process.memoryUsage().heapUsed;
  const held: unknown[] = [];
  await session.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  const t0 = performance.now();
  for (let i = 0; i < N; i++) held.push(decode(bytes));
  const ms = (performance.now() - t0) / N;
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as { profile: { head: SamplingNode } };
  gc!();
  const heldKb = (process.memoryUsage().heapUsed - before) / N / 1024;
  const sum = (n: SamplingNode): number => n.selfSize + n.children.reduce((s, c) => s + sum(c), 0);
  const kb = sum(profile.head) / N / 1024;
  console.log(`${name}: ${ms.toFixed(2)} ms, ${kb.toFixed(0)} KB allocated, ${heldKb.toFixed(0)} KB held a decode (${N} decodes of ${bytes.length} bytes, ${held.length} held)`);
  return { ms, kb, heldKb };
}

const whole = (b: Uint8Array) => proto.HistorySync.decode(b);
for (let i = 0; i < 10; i++) whole(bytes), decodeLeanHistorySync(bytes); // warm both up
const results: Record<'whole' | 'lean', Array<{ ms: number; kb: number; heldKb: number }>> = { whole: [], lean: [] };
for (let round = 0; round < 3; round++) {
  results.whole.push(await measure('proto.HistorySync.decode', whole));
  results.lean.push(await measure('history-decode.ts', decodeLeanHistorySync));
}
const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pick = (rs: Array<{ ms: number; kb: number; heldKb: number }>) => ({ ms: median(rs.map((r) => r.ms)), kb: median(rs.map((r) => r.kb)), heldKb: median(rs.map((r) => r.heldKb)) });
const w = pick(results.whole);
const l = pick(results.lean);
console.log(
  JSON.stringify({
    history_whole_ms: +w.ms.toFixed(2),
    history_lean_ms: +l.ms.toFixed(2),
    history_whole_alloc_kb: Math.round(w.kb),
    history_lean_alloc_kb: Math.round(l.kb),
    history_whole_held_kb: Math.round(w.heldKb),
    history_lean_held_kb: Math.round(l.heldKb),
    history_time_ratio: +(l.ms / w.ms).toFixed(3),
    history_held_ratio: +(l.heldKb / w.heldKb).toFixed(3),
  }),
);
session.disconnect();
