/**
 * Issue 23 item 2 (fencing), as migration 008 checks it once per statement: a node writes an
 * instance's rows only while it holds that instance's unexpired lease. Writes made at the same
 * moment are batched per instance, so one instance's stale lease never fails another's write, and
 * a stale write changes nothing (INSTANCE_MOVING, 503 with Retry-After).
 */
import test from 'ava';
import pg from 'pg';
import { pino } from 'pino';
import { openPostgresStorage } from '../../src/storage/postgres/index.js';
import { GatewayError } from '../../src/domain/errors.js';
import { systemClock } from '../../src/domain/clock.js';
import { systemTimers } from '../../src/domain/timers.js';
import { testConfig } from './open.js';
import { outgoing } from './scenarios.js';
import { freshDatabase } from '../helpers/postgres.js';

test('postgres: writes of an instance whose lease this node does not hold change nothing, and do not fail the writes of instances it holds', async (t) => {
  const db = await freshDatabase();
  const storage = await openPostgresStorage({ url: db.url, config: testConfig(), clock: systemClock, timers: systemTimers, logger: pino({ level: 'silent' }), nodeId: 'node-a', poolSize: 4, lazyPoolSize: 2 });
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  try {
    await admin.query(
      `INSERT INTO leases (instance_id, owner_node, epoch, expires_at) VALUES
        ('inst_mine0001', 'node-a', 1, now() + interval '1 minute'),
        ('inst_other001', 'node-b', 1, now() + interval '1 minute'),
        ('inst_expired1', 'node-a', 1, now() - interval '1 second')`,
    );
    const now = Date.now();
    const results = await Promise.allSettled([
      ...Array.from({ length: 5 }, (_, i) => storage.messages.recordOutgoing('inst_mine0001', outgoing(`MINE${i}`, 'a@s.whatsapp.net', now + i), i % 2 === 0)),
      storage.messages.recordOutgoing('inst_other001', outgoing('OTHER', 'a@s.whatsapp.net', now), true),
      storage.messages.recordOutgoing('inst_expired1', outgoing('EXPIRED', 'a@s.whatsapp.net', now), true),
    ]);
    t.deepEqual(results.slice(0, 5).map((r) => r.status), ['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled'], 'the held instance is written');
    for (const r of results.slice(5)) {
      t.is(r.status, 'rejected');
      const err = (r as PromiseRejectedResult).reason as unknown;
      t.true(err instanceof GatewayError && err.code === 'INSTANCE_MOVING' && err.retryAfter !== undefined, String(err));
    }
    // A lazy `pending` record is stored (and fenced) before the message may leave...
    await t.throwsAsync(storage.messages.recordOutgoing('inst_other001', outgoing('PREMIUM', 'a@s.whatsapp.net', now), false), { instanceOf: GatewayError, message: /no longer holds the instance/ });
    // ...unless the send stored its credit hold just before (`mayWait`): then it waits for its
    // status in the process, and its refusal reaches the status.
    await storage.messages.recordOutgoing('inst_other001', outgoing('LAZY', 'a@s.whatsapp.net', now), false, { mayWait: true });
    await t.throwsAsync(storage.messages.setStatus('inst_other001', 'LAZY', 'sent', undefined, false), { instanceOf: GatewayError, message: /no longer holds the instance/ });
    const stored = await admin.query<{ instance_id: string; n: number }>('SELECT instance_id, count(*)::int AS n FROM messages GROUP BY instance_id ORDER BY instance_id');
    t.deepEqual(stored.rows, [{ instance_id: 'inst_mine0001', n: 5 }], 'nothing of the instances it does not hold');
    // A status batch of a stale instance changes nothing either.
    await admin.query(`UPDATE leases SET owner_node = 'node-b' WHERE instance_id = 'inst_mine0001'`);
    await t.throwsAsync(storage.messages.setStatus('inst_mine0001', 'MINE0', 'sent', undefined, false), { instanceOf: GatewayError, message: /no longer holds the instance/ });
    t.is((await admin.query<{ status: string }>(`SELECT status FROM messages WHERE message_id = 'MINE0'`)).rows[0]?.status, 'pending');
  } finally {
    await admin.end();
    await storage.close();
    await db.drop();
  }
});
