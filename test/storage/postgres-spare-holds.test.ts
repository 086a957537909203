/**
 * Issue 23 (`pg_send_vs_koa`): a busy instance's credit batches store spare holds, so most sends
 * take a hold without a round trip. The rule this guards: spares are this process's shortcut and
 * nobody pays for it. The process that holds them counts them as free; once its sends stop they go
 * back (another process, or node, then sees every credit free); a refund of every credit is not
 * refused because of them; a clean close gives them back; and spares stored under a session
 * connection that was lost (when other processes may release this process's holds) are never
 * given to a send, so no send goes out without its debit. (A crash releases them with every other
 * hold of the process: the credits contract's kill -9 test, whose eight concurrent sends ask for
 * spares.)
 */
import test from 'ava';
import pg from 'pg';
import { systemClock } from '../../src/domain/clock.js';
import { systemTimers } from '../../src/domain/timers.js';
import { openPostgresStorage } from '../../src/storage/postgres/index.js';
import { LIVE_SESSIONS } from '../../src/storage/postgres/session-sql.js';
import type { Storage } from '../../src/storage/storage.js';
import { freshDatabase } from '../helpers/postgres.js';
import { testConfig } from './engines.js';
import { pino } from 'pino';

const ID = 'inst_spares001';
/** Long enough that a loaded machine reads the spares before they go back. */
const IDLE_MS = 2_000;

function open(url: string, spareIdleMs = IDLE_MS): Promise<Storage> {
  return openPostgresStorage({ url, config: testConfig(), clock: systemClock, timers: systemTimers, logger: pino({ level: 'silent' }), poolSize: 4, lazyPoolSize: 2, spareIdleMs });
}

async function sql<R extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<R>(text, values)).rows;
  } finally {
    await c.end();
  }
}

/** The credit row's `held` and the hold rows, read together. */
async function held(url: string): Promise<{ held: number; rows: number }> {
  const [r] = await sql<{ held: number | null; rows: string }>(url, 'SELECT (SELECT held FROM credits WHERE instance_id = $1) AS held, (SELECT count(*) FROM credit_holds WHERE instance_id = $1) AS rows', [ID]);
  return { held: r!.held ?? 0, rows: Number(r!.rows) };
}

/** 20 concurrent sends, as the bench's connections: the batches after the first ask for spares. */
async function wave(s: Storage): Promise<void> {
  const holds = await Promise.all(Array.from({ length: 20 }, () => s.credits.hold(ID)));
  if (holds.some((h) => h === null)) throw new Error('a hold was refused');
  await Promise.all(holds.map((h) => h!.commit()));
}

async function until(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

/** A fresh database and a process that sent three waves from 1,000 credits (so it keeps spares). */
async function busyStore(): Promise<{ db: Awaited<ReturnType<typeof freshDatabase>>; s: Storage }> {
  const db = await freshDatabase();
  const s = await open(db.url);
  await s.credits.add(ID, 1_000);
  for (let i = 0; i < 3; i++) await wave(s);
  return { db, s };
}

test('postgres: spare holds are free to their process, go back when its sends stop, before a refund and on close', async (t) => {
  const { db, s } = await busyStore();
  try {
    t.is(s.credits.balance(ID), 940, 'every debit once');
    const busy = await held(db.url);
    t.true(busy.held > 0, 'spare holds are stored after a busy burst (else this test proves nothing)');
    t.is(busy.rows, busy.held, 'each spare is a hold row of this process');
    t.is(s.credits.available(ID), 940, 'the process that stored them counts them as free');

    t.true(await until(async () => (await held(db.url)).held === 0, IDLE_MS + 5_000), 'given back once no send takes one');
    const other = await open(db.url);
    try {
      t.is(other.credits.available(ID), 940, 'another process sees every credit free');
    } finally {
      await other.close();
    }

    await wave(s);
    t.true((await held(db.url)).held > 0);
    t.deepEqual(await s.credits.add(ID, -920), { balance: 0, spent: 80 }, 'a refund of every credit is not refused because of spares');
    t.is((await held(db.url)).held, 0);

    await s.credits.add(ID, 100);
    await wave(s);
    t.true((await held(db.url)).held > 0);
  } finally {
    await s.close();
  }
  t.deepEqual(await held(db.url), { held: 0, rows: 0 }, 'a clean close gives the spares back');
  await db.drop();
});

test('postgres: spares stored before the session connection was lost are never given to a send (each send is debited)', async (t) => {
  const { db, s } = await busyStore();
  try {
    t.true((await held(db.url)).held > 0, 'spares are stored');
    // The session connection drops; while it is away, another process's sweep releases this
    // process's holds, spares included (as src/storage/postgres/credits.ts releaseStale does).
    const [ended] = await sql<{ ok: boolean }>(db.url, "SELECT bool_and(pg_terminate_backend(pid, 5000)) AS ok FROM pg_stat_activity WHERE application_name = 'wa-gateway session' AND datname = current_database()");
    t.true(ended!.ok);
    await sql(
      db.url,
      `WITH live AS (${LIVE_SESSIONS}),
        gone AS (DELETE FROM credit_holds h WHERE NOT EXISTS (SELECT 1 FROM live WHERE live.session = h.session) RETURNING instance_id),
        per AS (SELECT instance_id, count(*)::integer AS n FROM gone GROUP BY instance_id)
      UPDATE credits c SET held = c.held - per.n FROM per WHERE c.instance_id = per.instance_id`,
    );
    t.deepEqual(await held(db.url), { held: 0, rows: 0 }, 'the sweep released them');
    await new Promise((r) => setTimeout(r, 50));
    await wave(s);
    await wave(s);
    const [row] = await sql<{ balance: number; spent: number }>(db.url, 'SELECT balance::integer, spent::integer FROM credits WHERE instance_id = $1', [ID]);
    t.deepEqual(row, { balance: 900, spent: 100 }, 'every send after the loss was debited: none took a released spare');
  } finally {
    await s.close();
  }
  await db.drop();
});
