/**
 * Issue 23 part 1: a PostgreSQL server that cannot be reached or refuses (connection refused, too
 * many clients, a restart under traffic) is 503 STORAGE_UNAVAILABLE with a Retry-After, never a
 * crash of the process, and the engine reconnects by itself once the server is back. Runs against
 * a throwaway cluster of its own (test/helpers/postgres.ts), since it stops and restarts it.
 */
import test from 'ava';
import pg from 'pg';
import { freePortUrl, freshDatabase, startCluster, type Cluster } from '../helpers/postgres.js';
import { openAt, testConfig } from './open.js';
import { pino } from 'pino';
import { openPostgresStorage } from '../../src/storage/postgres/index.js';
import { systemClock } from '../../src/domain/clock.js';
import { systemTimers } from '../../src/domain/timers.js';

let cluster: Cluster;

test.before(async () => {
  // Few connections, so "too many clients" is easy to reach; none kept for superusers.
  cluster = await startCluster(['max_connections=12', 'superuser_reserved_connections=0']);
});

test.after.always(() => {
  cluster?.destroy();
});

function code(err: unknown): string | undefined {
  return (err as { code?: string } | undefined)?.code;
}

test.serial('postgres: a server that refuses connections is STORAGE_UNAVAILABLE at open', async (t) => {
  const err = await t.throwsAsync(openAt('postgres', await freePortUrl()));
  t.is(code(err), 'STORAGE_UNAVAILABLE');
  t.truthy((err as { retryAfter?: number }).retryAfter);
});

test.serial('postgres: too many clients is STORAGE_UNAVAILABLE, and opening works once connections are free', async (t) => {
  const db = await freshDatabase(cluster.url);
  const hogs: pg.Client[] = [];
  try {
    for (;;) {
      const c = new pg.Client({ connectionString: db.url });
      try {
        await c.connect();
      } catch {
        break;
      }
      hogs.push(c);
    }
    const err = await t.throwsAsync(openAt('postgres', db.url));
    t.is(code(err), 'STORAGE_UNAVAILABLE', String(err));
    await Promise.all(hogs.splice(0).map((c) => c.end()));
    const s = await openAt('postgres', db.url);
    await s.credits.add('inst_unavail001', 1);
    await s.close();
  } finally {
    await Promise.all(hogs.map((c) => c.end()));
    await db.drop();
  }
});

test.serial('postgres: a restart under traffic fails writes with STORAGE_UNAVAILABLE, then the engine carries on by itself', async (t) => {
  const db = await freshDatabase(cluster.url);
  const s = await openAt('postgres', db.url);
  const id = 'inst_unavail002';
  try {
    await s.credits.add(id, 100);
    const { record } = await s.instances.create({ name: 'survivor' });
    cluster.stop('fast');
    const failures = await Promise.allSettled([s.credits.hold(id), s.instances.modify(record.id, () => undefined), s.messages.get(id, 'X'), s.auth.isPaired(id), s.media.get(id, 'X')]);
    for (const f of failures) {
      t.is(f.status, 'rejected');
      if (f.status === 'rejected') t.is(code(f.reason), 'STORAGE_UNAVAILABLE', String(f.reason));
    }
    t.is(s.instances.get(record.id)?.name, 'survivor', 'reads from memory go on');
    cluster.start();
    // The pools open new connections on their own: a send goes through again.
    let hold = null;
    const until = Date.now() + 20_000;
    while (!hold && Date.now() < until) {
      hold = await s.credits.hold(id).catch(() => null);
      if (!hold) await new Promise((r) => setTimeout(r, 200));
    }
    t.truthy(hold, 'a hold is stored again after the restart');
    t.is(await hold!.commit(), 99);
    await s.instances.modify(record.id, (r) => {
      r.name = 'after restart';
    });
    t.is(s.instances.get(record.id)?.name, 'after restart');
  } finally {
    await s.close();
    await db.drop();
  }
});

test.serial('postgres: a send whose debit met a restart waits for it: answered with its balance once the database is back, told "sent, not recorded" only past the wait, and debited once either way', async (t) => {
  const db = await freshDatabase(cluster.url);
  const open = (debitWaitMs: number) => openPostgresStorage({ url: db.url, config: testConfig(), clock: systemClock, timers: systemTimers, logger: pino({ level: 'silent' }), poolSize: 4, lazyPoolSize: 2, debitWaitMs });
  const id = 'inst_unavail003';
  const stored = async () => {
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      return (await c.query<{ balance: string; held: number }>('SELECT balance, held FROM credits WHERE instance_id = $1', [id])).rows[0];
    } finally {
      await c.end();
    }
  };
  // A wait longer than any restart here: the send learns its balance, as if nothing happened.
  let s = await open(60_000);
  try {
    await s.credits.add(id, 100);
    const hold = (await s.credits.hold(id))!;
    cluster.stop('fast');
    let settled = false;
    const commit = hold.commit().finally(() => (settled = true));
    await new Promise((r) => setTimeout(r, 600));
    t.false(settled, 'the send waits while the database is away');
    cluster.start();
    t.is(await commit, 99);
    t.deepEqual(await stored(), { balance: '99', held: 0 });
  } finally {
    await s.close();
  }
  // A short wait: the send is told its message left unrecorded; the debit is still written once.
  s = await open(300);
  try {
    const hold = (await s.credits.hold(id))!;
    cluster.stop('fast');
    const err = await t.throwsAsync(hold.commit());
    t.is(code(err), 'STORAGE_UNAVAILABLE');
    t.regex(err!.message, /was sent.*do not resend/);
    cluster.start();
    let now = await stored().catch(() => undefined);
    const until = Date.now() + 20_000;
    while (now?.balance !== '98' && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 200));
      now = await stored().catch(() => undefined);
    }
    t.deepEqual(now, { balance: '98', held: 0 }, 'the debit is written once the database is back');
  } finally {
    await s.close();
    await db.drop();
  }
});
