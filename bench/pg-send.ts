/**
 * Sends per second through the storage ports, files engine vs postgres engine, same run, same
 * machine: each send takes a credit hold, records its message `pending` (not durable), then
 * debits and records `sent` (not durable) together, as src/sending/send-service.ts does; 50 sends
 * in flight against one instance. Rounds alternate between the engines. The last line is JSON.
 *
 *   node --import=tsx bench/pg-send.ts     (GATEWAY_TEST_DATABASE_URL, or 127.0.0.1:5432, or a throwaway cluster)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { defaultConfig } from '../src/config/validate.js';
import { systemClock } from '../src/domain/clock.js';
import { systemTimers } from '../src/domain/timers.js';
import { openFileStorage } from '../src/storage/files/index.js';
import { openPostgresStorage } from '../src/storage/postgres/index.js';
import type { Storage } from '../src/storage/storage.js';
import { freshDatabase } from '../test/helpers/postgres.js';
import { UNGUARDED } from '../src/fs/write-guard.js';

const SENDS = Number(process.env.BENCH_SENDS ?? 5000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = 50;
const config = defaultConfig();
const logger = pino({ level: 'silent' });

async function sends(storage: Storage, round: number): Promise<number> {
  const id = `inst_bench${String(round).padStart(5, '0')}`;
  await storage.credits.add(id, SENDS);
  let next = 0;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    while (next < SENDS) {
      const n = next++;
      const messageId = `BENCH${round}X${n}`;
      const hold = await storage.credits.hold(id);
      if (!hold) throw new Error('no credit');
      const now = Date.now();
      await storage.messages.recordOutgoing(id, { messageId, chatId: `1555${n % 100}@s.whatsapp.net`, fromMe: true, sender: null, from: null, type: 'text', status: 'pending', text: 'benchmark message', timestamp: now, updatedAt: now }, false);
      await Promise.all([hold.commit(), storage.messages.setStatus(id, messageId, 'sent', undefined, false)]);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const rate = SENDS / ((performance.now() - started) / 1000);
  if (storage.credits.balance(id) !== 0) throw new Error(`balance ${storage.credits.balance(id)} after ${SENDS} sends`);
  return rate;
}

const dir = await mkdtemp(join(tmpdir(), 'gw-bench-files-'));
const db = await freshDatabase();
const files = await openFileStorage({ guard: UNGUARDED, dataDir: dir, config, clock: systemClock, timers: systemTimers, logger });
const postgres = await openPostgresStorage({ url: db.url, config, clock: systemClock, timers: systemTimers, logger, ...(process.env.BENCH_LAZY_POOL ? { lazyPoolSize: Number(process.env.BENCH_LAZY_POOL) } : {}) });
const results: Record<'files' | 'postgres', number[]> = { files: [], postgres: [] };
try {
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? (['files', 'postgres'] as const) : (['postgres', 'files'] as const);
    for (const engine of order) results[engine].push(await sends(engine === 'files' ? files : postgres, round));
  }
} finally {
  await files.close();
  await postgres.close();
  await db.drop();
  await rm(dir, { recursive: true, force: true });
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [engine, xs] of Object.entries(results)) process.stdout.write(`${engine}: ${xs.map((x) => x.toFixed(0)).join(', ')} sends/s (median ${median(xs).toFixed(0)})\n`);
process.stdout.write(`${JSON.stringify({ sends: SENDS, concurrency: CONCURRENCY, filesSendsPerSec: Math.round(median(results.files)), postgresSendsPerSec: Math.round(median(results.postgres)), postgresToFiles: Number((median(results.postgres) / median(results.files)).toFixed(3)) })}\n`);
