/**
 * Which PostgreSQL client the postgres storage engine keeps: `pg` (node-postgres) or `postgres`
 * (porsager), measured on the hot path of a send: a credit hold, an outgoing message insert
 * (not durable), a status update (not durable) and the debit, with 50 sends in flight against one
 * instance, each client with the same pool sizes, in the same run. Prints sends/s per client.
 *
 *   node --import=tsx bench/pg-clients.ts            (GATEWAY_TEST_DATABASE_URL, or 127.0.0.1:5432)
 */
import pg from 'pg';
import postgres from 'postgres';
import { freshDatabase } from '../test/helpers/postgres.js';

const SENDS = Number(process.env.BENCH_SENDS ?? 3000);
const CONCURRENCY = 50;
const POOL = 10;
const LAZY_POOL = 4;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);

const SCHEMA = `
CREATE TABLE credits (instance_id text PRIMARY KEY, balance bigint NOT NULL, spent bigint NOT NULL, held integer NOT NULL);
CREATE TABLE credit_holds (instance_id text NOT NULL, session integer NOT NULL, n bigint NOT NULL, PRIMARY KEY (instance_id, session, n));
CREATE TABLE messages (instance_id text NOT NULL, message_id text NOT NULL, seq bigint GENERATED ALWAYS AS IDENTITY, chat_id text NOT NULL,
  from_me boolean NOT NULL, status text NOT NULL, ts bigint NOT NULL, updated_at bigint NOT NULL, body text NOT NULL, PRIMARY KEY (instance_id, message_id));
CREATE INDEX messages_chat ON messages (instance_id, chat_id, seq);
`;

const HOLD = `WITH a AS (UPDATE credits SET held = held + 1 WHERE instance_id = $1 AND balance - held > 0 RETURNING instance_id)
  INSERT INTO credit_holds (instance_id, session, n) SELECT instance_id, $2, $3 FROM a RETURNING n`;
const COMMIT = `WITH h AS (DELETE FROM credit_holds WHERE instance_id = $1 AND session = $2 AND n = $3 RETURNING instance_id)
  UPDATE credits c SET balance = balance - 1, spent = spent + 1, held = held - 1 FROM h WHERE c.instance_id = h.instance_id RETURNING c.balance`;
const INSERT = `INSERT INTO messages (instance_id, message_id, chat_id, from_me, status, ts, updated_at, body) VALUES ($1, $2, $3, true, 'pending', $4, $4, $5) ON CONFLICT DO NOTHING`;
const STATUS = `UPDATE messages SET status = $3, updated_at = $4 WHERE instance_id = $1 AND message_id = $2 AND status = 'pending'`;

type Run = (sql: string, params: unknown[], lazy: boolean) => Promise<number>;

async function sends(run: Run, label: string, round: number): Promise<{ rate: number; cpuUs: number }> {
  const id = `inst_${label}_${round}`;
  await run(`INSERT INTO credits VALUES ($1, ${SENDS}, 0, 0)`, [id], false);
  let next = 0;
  const started = performance.now();
  const cpu = process.cpuUsage();
  const worker = async (): Promise<void> => {
    while (next < SENDS) {
      const n = next++;
      const now = Date.now();
      if ((await run(HOLD, [id, 1, n], false)) !== 1) throw new Error('no credit');
      await run(INSERT, [id, `m${n}`, `chat${n % 20}@s.whatsapp.net`, now, '{"type":"text","text":"benchmark message"}'], true);
      await Promise.all([run(COMMIT, [id, 1, n], false), run(STATUS, [id, `m${n}`, 'sent', now], true)]);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const used = process.cpuUsage(cpu);
  return { rate: SENDS / ((performance.now() - started) / 1000), cpuUs: (used.user + used.system) / SENDS };
}

async function withPg(url: string): Promise<{ run: Run; end(): Promise<void> }> {
  const durable = new pg.Pool({ connectionString: url, max: POOL });
  const lazy = new pg.Pool({ connectionString: url, max: LAZY_POOL, options: '-c synchronous_commit=off' });
  return {
    run: async (sql, params, isLazy) => (await (isLazy ? lazy : durable).query(sql, params)).rowCount ?? 0,
    end: async () => {
      await durable.end();
      await lazy.end();
    },
  };
}

async function withPostgresJs(url: string): Promise<{ run: Run; end(): Promise<void> }> {
  const durable = postgres(url, { max: POOL, onnotice: () => undefined });
  const lazy = postgres(url, { max: LAZY_POOL, connection: { synchronous_commit: 'off' }, onnotice: () => undefined });
  return {
    run: async (sql, params, isLazy) => (await (isLazy ? lazy : durable).unsafe(sql, params as postgres.ParameterOrJSON<never>[], { prepare: true })).count,
    end: async () => {
      await durable.end();
      await lazy.end();
    },
  };
}

const db = await freshDatabase();
try {
  const setup = new pg.Client({ connectionString: db.url });
  await setup.connect();
  await setup.query(SCHEMA);
  await setup.end();
  const results: Record<string, number[]> = { pg: [], postgres: [] };
  const cpu: Record<string, number[]> = { pg: [], postgres: [] };
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating, so neither client always runs on the warmer (or fuller) database.
    for (const [label, open] of round % 2 === 0 ? ([['pg', withPg], ['postgres', withPostgresJs]] as const) : ([['postgres', withPostgresJs], ['pg', withPg]] as const)) {
      const client = await open(db.url);
      try {
        const r = await sends(client.run, label, round);
        results[label]!.push(r.rate);
        cpu[label]!.push(r.cpuUs);
      } finally {
        await client.end();
      }
    }
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  for (const [label, xs] of Object.entries(results)) {
    process.stdout.write(`${label}: ${xs.map((x) => x.toFixed(0)).join(', ')} sends/s (median ${median(xs).toFixed(0)}); client CPU per send ${cpu[label]!.map((x) => x.toFixed(0)).join(', ')} µs (median ${median(cpu[label]!).toFixed(0)})\n`);
  }
  const summary = { sends: SENDS, concurrency: CONCURRENCY, pgSendsPerSec: median(results.pg!), postgresSendsPerSec: median(results.postgres!), pgCpuUsPerSend: median(cpu.pg!), postgresCpuUsPerSend: median(cpu.postgres!) };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
} finally {
  await db.drop();
}
