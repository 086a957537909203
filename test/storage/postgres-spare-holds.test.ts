/**
 * Issue 23 (`pg_send_vs_koa`): a busy instance's credit batches store spare holds, so most sends
 * take a hold without a round trip. The rule this guards: spares are this process's shortcut and
 * nobody else pays for it. The process that holds them counts them as free; once its sends stop
 * they go back within SPARE_IDLE_MS (another process, or node, sees the credits free again); a
 * refund of every credit is not refused because of them; a clean close gives them back. (A crash
 * releases them with every other hold of the process: the credits contract's kill -9 test, whose
 * eight concurrent sends ask for spares.)
 */
import test from 'ava';
import pg from 'pg';
import { SPARE_IDLE_MS } from '../../src/storage/postgres/credits.js';
import { postgresEngine } from './engines.js';

const ID = 'inst_spares001';

async function heldInDb(url: string): Promise<{ held: number; rows: number }> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const held = (await c.query<{ held: number }>('SELECT held FROM credits WHERE instance_id = $1', [ID])).rows[0]?.held ?? 0;
    const rows = Number((await c.query<{ n: string }>('SELECT count(*) AS n FROM credit_holds WHERE instance_id = $1', [ID])).rows[0]!.n);
    return { held, rows };
  } finally {
    await c.end();
  }
}

async function until(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return check();
}

test('postgres: spare holds are free to their process, go back when its sends stop, before a refund and on close', async (t) => {
  const at = await postgresEngine.location();
  const s = await at.open();
  try {
    await s.credits.add(ID, 1_000);
    // Waves of concurrent sends, as the bench's 50 connections: the batches after the first ask
    // for spares, and later sends take them.
    const wave = async (): Promise<void> => {
      const holds = await Promise.all(Array.from({ length: 20 }, () => s.credits.hold(ID)));
      t.true(holds.every((h) => h !== null));
      await Promise.all(holds.map((h) => h!.commit()));
    };
    for (let i = 0; i < 3; i++) await wave();
    t.is(s.credits.balance(ID), 940, 'every debit once');
    const busy = await heldInDb(at.address);
    t.true(busy.held > 0, 'spare holds are stored after a busy burst (else this test proves nothing)');
    t.is(busy.rows, busy.held, 'each spare is a hold row of this process');
    t.is(s.credits.available(ID), 940, 'the process that stored them counts them as free');

    t.true(await until(async () => (await heldInDb(at.address)).held === 0, SPARE_IDLE_MS + 5_000), 'given back once no send takes one');
    const other = await at.open();
    try {
      t.is(other.credits.available(ID), 940, 'another process sees every credit free');
    } finally {
      await other.close();
    }

    await wave();
    t.true((await heldInDb(at.address)).held > 0);
    t.deepEqual(await s.credits.add(ID, -920), { balance: 0, spent: 80 }, 'a refund of every credit is not refused because of spares');
    t.is((await heldInDb(at.address)).held, 0);

    await s.credits.add(ID, 100);
    await wave();
    t.true((await heldInDb(at.address)).held > 0);
  } finally {
    await s.close();
  }
  t.deepEqual(await heldInDb(at.address), { held: 0, rows: 0 }, 'a clean close gives the spares back');
  await at.destroy();
});
