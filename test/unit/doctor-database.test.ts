/**
 * Guards issue 23 item 7: `gateway doctor` checks the database of several hosts: reachable, its
 * version, a gateway in it, its migrations.
 */
import test from 'ava';
import { initDatabase } from '../../src/cluster/init-database.js';
import { checkDatabase } from '../../src/doctor/database.js';
import { freePortUrl, freshDatabase } from '../helpers/postgres.js';

test('no database configured: ok, not used', async (t) => {
  t.like(await checkDatabase(null), { name: 'database', status: 'ok' });
});

test('a database that does not answer fails naming the cause, never the password', async (t) => {
  const url = (await freePortUrl()).replace('gw@', 'gw:s3cret@');
  const r = await checkDatabase(url, 2_000);
  t.is(r.status, 'fail');
  t.regex(r.message, /ECONNREFUSED/);
  t.notRegex(r.message, /s3cret/);
});

test('an empty database fails (no gateway schema); after init it is ok with the current schema', async (t) => {
  const db = await freshDatabase();
  t.teardown(() => db.drop());
  const empty = await checkDatabase(db.url);
  t.is(empty.status, 'fail');
  t.regex(empty.fix ?? '', /gateway init --database/);
  await initDatabase(db.url, { clusterSecret: null, settings: {} });
  const ready = await checkDatabase(db.url);
  t.is(ready.status, 'ok', ready.message);
  t.regex(ready.message, /PostgreSQL 1\d, schema \d+ \(current\)/);
});
