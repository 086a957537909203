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
import { newDeliveryId, newDeliveryRecord } from '../../src/webhooks/delivery-record.js';
import { patchOf } from '../../src/storage/ports/outbox.js';
import type { GatewayEvent } from '../../src/events/types.js';

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

test('postgres: an auth write carries the lease epoch its connection started under; another epoch of the same node changes nothing (issue 23 item 2)', async (t) => {
  const db = await freshDatabase();
  const storage = await openPostgresStorage({ url: db.url, config: testConfig(), clock: systemClock, timers: systemTimers, logger: pino({ level: 'silent' }), nodeId: 'node-a', poolSize: 4, lazyPoolSize: 2 });
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  const ID = 'inst_epoch0001';
  const snapshot = (n: number, types: string[]) => ({ creds: JSON.stringify({ n }), tables: types.map((type) => ({ type, changed: true, json: () => JSON.stringify({ n, type }) })), paired: true });
  const stored = async () => {
    const c = await admin.query<{ creds: string }>('SELECT creds FROM auth_creds WHERE instance_id = $1', [ID]);
    const k = await admin.query<{ type: string; data: string }>('SELECT type, data FROM auth_keys WHERE instance_id = $1 ORDER BY type', [ID]);
    return { creds: c.rows[0]?.creds ?? null, keys: k.rows.map((r) => `${r.type}=${r.data}`) };
  };
  try {
    // Node a held epoch 5, lost the instance, and took it back: epoch 7.
    await admin.query(`INSERT INTO leases (instance_id, owner_node, epoch, expires_at) VALUES ($1, 'node-a', 7, now() + interval '1 minute')`, [ID]);
    await storage.auth.write(ID, snapshot(7, ['pre-key', 'session']), { epoch: 7 });
    const now7 = await stored();
    t.deepEqual(now7, { creds: '{"n":7}', keys: ['pre-key={"n":7,"type":"pre-key"}', 'session={"n":7,"type":"session"}'] });
    // The connection of epoch 5 writes late: refused whole (its key tables are not dropped either).
    const late = await storage.auth.write(ID, snapshot(5, ['session']), { epoch: 5 }).then(() => null, (err: unknown) => err);
    t.true(late instanceof GatewayError && late.code === 'INSTANCE_MOVING', String(late));
    t.deepEqual(await stored(), now7, 'nothing of the old epoch is stored');
    // Without an epoch the trigger's rule applies (this node holds the lease, unexpired).
    await storage.auth.write(ID, snapshot(8, ['pre-key', 'session']));
    t.is((await stored()).creds, '{"n":8}');
    // The lease moves to node b at epoch 8: node a's epoch-7 writer is refused too.
    await admin.query(`UPDATE leases SET owner_node = 'node-b', epoch = 8 WHERE instance_id = $1`, [ID]);
    const moved = await storage.auth.write(ID, snapshot(9, ['pre-key']), { epoch: 8 }).then(() => null, (err: unknown) => err);
    t.true(moved instanceof GatewayError && moved.code === 'INSTANCE_MOVING', String(moved));
    t.is((await stored()).creds, '{"n":8}');
  } finally {
    await admin.end();
    await storage.close();
    await db.drop();
  }
});

test('postgres: every other write of an instance carries the lease epoch it was made under; one made under an epoch the node no longer holds changes nothing (issue 23 item 2, migration 011)', async (t) => {
  const db = await freshDatabase();
  const storage = await openPostgresStorage({ url: db.url, config: testConfig(), clock: systemClock, timers: systemTimers, logger: pino({ level: 'silent' }), nodeId: 'node-a', poolSize: 4, lazyPoolSize: 2 });
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  const ID = 'inst_epochall1';
  // What node a believes it holds: epoch 5, while the lease says 7 (it lost the instance and took it back).
  let believed = 5;
  storage.epochs.bind((id) => (id === ID ? believed : null));
  const moving = (p: Promise<unknown>) =>
    p.then(
      () => t.fail('a write of a stale epoch was stored'),
      (err: unknown) => t.true(err instanceof GatewayError && err.code === 'INSTANCE_MOVING', String(err)),
    );
  const count = async (table: string) => (await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE instance_id = $1`, [ID])).rows[0]!.n;
  const handover = { chatId: 'a@s.whatsapp.net', phone: '+1555', flow: 'f', node: 'n', openedAt: new Date().toISOString(), expiresAt: new Date(Date.now() + 60_000).toISOString() };
  const position = { phone: '+1555', node: null, revision: 'r1', updatedAt: new Date().toISOString() };
  const now = Date.now();
  const event = (text: string): GatewayEvent => ({
    type: 'message.received',
    instanceId: ID,
    timestamp: new Date(now).toISOString(),
    data: { messageId: `M${text}`, chatId: '15550001000@s.whatsapp.net', isGroup: false, sender: '15550001000@s.whatsapp.net', from: '+15550001000', type: 'text', text, timestamp: new Date(now).toISOString() },
  });
  const delivery = (text: string, seq: number) => newDeliveryRecord(event(text), newDeliveryId(now + seq), seq, now + seq);
  const TABLES = ['messages', 'media', 'handovers', 'conversations', 'credit_holds', 'deliveries'];
  try {
    await admin.query(`INSERT INTO leases (instance_id, owner_node, epoch, expires_at) VALUES ($1, 'node-a', 7, now() + interval '1 minute')`, [ID]);
    await storage.credits.add(ID, 10);
    // Under the stale epoch: a message, a media file, a flow position, a handover, a credit hold.
    await moving(storage.messages.recordOutgoing(ID, outgoing('OLD1', 'a@s.whatsapp.net', now), true));
    await moving(storage.media.put(ID, 'OLD1', { bytes: new Uint8Array([1, 2, 3]) }, now));
    await moving(storage.flows.saveHandovers(ID, new Map([[handover.chatId, handover]]), [handover.chatId]));
    await moving(storage.flows.saveConversations(ID, new Map([['a@s.whatsapp.net', position]]), ['a@s.whatsapp.net']));
    await moving(storage.credits.hold(ID));
    await moving(storage.outbox.append(delivery('old', 1)));
    for (const table of TABLES) t.is(await count(table), 0, `nothing of the stale epoch in ${table}`);
    // Under the epoch it holds, the same writes are stored...
    believed = 7;
    await storage.messages.recordOutgoing(ID, outgoing('NEW1', 'a@s.whatsapp.net', now), true);
    t.true(await storage.media.put(ID, 'NEW1', { bytes: new Uint8Array([1, 2, 3]) }, now));
    await storage.flows.saveHandovers(ID, new Map([[handover.chatId, handover]]), [handover.chatId]);
    await storage.flows.saveConversations(ID, new Map([['a@s.whatsapp.net', position]]), ['a@s.whatsapp.net']);
    const hold = await storage.credits.hold(ID);
    t.truthy(hold, 'a hold of the held epoch is granted');
    const fresh1 = delivery('new', 2);
    await storage.outbox.append(fresh1);
    for (const table of TABLES) t.is(await count(table), 1, `the held epoch's write is in ${table}`);
    // ...and the epoch travels with each write only: nothing of it is stored.
    for (const table of TABLES)
      t.is((await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE lease_epoch IS NOT NULL`)).rows[0]!.n, 0, `${table} keeps no epoch`);
    // Changes of a stored row are fenced the same way: status, edit, reaction, read.
    believed = 5;
    await moving(storage.messages.setStatus(ID, 'NEW1', 'sent'));
    await moving(storage.messages.edited(ID, 'NEW1', 'changed'));
    await moving(storage.messages.reaction(ID, 'NEW1', 'b@s.whatsapp.net', '👍'));
    await moving(storage.outbox.saveOutcome(ID, { ...patchOf(fresh1), status: 'failed', finishedAt: new Date(now).toISOString() }, { durable: true }));
    t.is((await admin.query<{ status: string }>('SELECT status FROM deliveries WHERE instance_id = $1', [ID])).rows[0]?.status, 'pending', 'the delivery is unchanged');
    const row = await admin.query<{ status: string; edited_text: string | null; reactions: unknown }>('SELECT status, edited_text, reactions FROM messages WHERE instance_id = $1', [ID]);
    t.deepEqual(row.rows[0], { status: 'pending', edited_text: null, reactions: null }, 'the stored row is unchanged');
    believed = 7;
    t.is((await storage.messages.setStatus(ID, 'NEW1', 'sent'))?.to, 'sent');
    // A batch made of both epochs (the lease moved between two writes queued together): the stale
    // write is refused, the other is stored (one batch per epoch).
    believed = 5;
    const stale = storage.messages.recordOutgoing(ID, outgoing('MIX5', 'a@s.whatsapp.net', now), true);
    believed = 7;
    const fresh = storage.messages.recordOutgoing(ID, outgoing('MIX7', 'a@s.whatsapp.net', now), true);
    await moving(stale);
    await fresh;
    t.deepEqual((await admin.query<{ message_id: string }>(`SELECT message_id FROM messages WHERE instance_id = $1 AND message_id LIKE 'MIX%'`, [ID])).rows, [{ message_id: 'MIX7' }]);
    // Without an epoch (a write not tied to a tenure) the owner and expiry rule applies.
    storage.epochs.bind(() => null);
    t.is((await storage.messages.setStatus(ID, 'NEW1', 'delivered'))?.to, 'delivered');
    await hold!.commit();
  } finally {
    await admin.end();
    await storage.close();
    await db.drop();
  }
});
