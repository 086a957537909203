/**
 * Guards issue 23 item 6 (`gateway storage migrate --to URL`): what the PostgreSQL engine reads back
 * through its ports after a migration is what the files engine reads through the same ports:
 * instances and keys, the owners' trial records, credits (the interrupted hold released), every
 * chat and message with its status, edit, reactions and deletion (in order), media bytes, WhatsApp
 * auth state (creds and every key table), the flow, open handovers and conversation positions, and
 * the webhook outbox (pending and finished deliveries with their events and ids); and the gateway
 * record holds the data dir's server secret hash, a new cluster secret, its plans and webhook policy.
 *
 * And the migration 2 brief (issue 25's stores): operators (each role, password hashes: they sign
 * in with their passwords), the audit log (order and times; entries appended on the nodes come
 * after it) and usage per day are copied; instance settings (a proxy with its password) and webhook
 * headers and filters survive; a resumed run (a kill while these were copied) copies them again
 * with nothing twice: the audit keyed by each entry's place in the log, usage days set, not added.
 * And files changed between two runs are copied again by the next one (never a gateway on a copy
 * that does not match).
 */
import test from 'ava';
import { rm } from 'node:fs/promises';
import pg from 'pg';
import { pino } from 'pino';
import { generateClusterSecret } from '../../src/cluster/gateway-record.js';
import { loadConfig } from '../../src/config/load.js';
import { systemClock } from '../../src/domain/clock.js';
import { verifyPassword } from '../../src/domain/passwords.js';
import { verifySecret } from '../../src/domain/secrets.js';
import { systemTimers } from '../../src/domain/timers.js';
import { migrateDataDir, type MigrationReport } from '../../src/storage/migrate/run.js';
import { openPostgresStorage } from '../../src/storage/postgres/index.js';
import { tempDir } from '../helpers/daemon.js';
import { FIXTURE_USAGE, writeFilesFixture } from '../helpers/files-fixture.js';
import { assertSameThroughPorts } from '../helpers/migrate-compare.js';
import { openFileStorage } from '../../src/storage/files/index.js';
import { UNGUARDED } from '../../src/fs/write-guard.js';
import { freshDatabase } from '../helpers/postgres.js';

test('after a migration the PostgreSQL engine reads through every port what the files engine reads', async (t) => {
  t.timeout(120_000);
  const dataDir = await tempDir('gw-migrate-');
  const db = await freshDatabase();
  t.teardown(async () => {
    await rm(dataDir, { recursive: true, force: true });
    await db.drop();
  });
  const fixture = await writeFilesFixture(dataDir, { instances: 3, messages: 40, media: 2, config: { webhooks: { allowPrivateTargets: true, historyPerInstance: 50 } } });
  const clusterSecret = generateClusterSecret();
  const announced: MigrationReport[] = [];
  const report = await migrateDataDir({ dataDir, url: db.url, clusterSecret, announce: async (r) => void announced.push(r) });
  t.deepEqual(announced, [report]);
  t.false(report.resumed);
  t.is(report.owners, 2);
  t.is(report.operators, 2);
  t.is(report.auditEntries, fixture.auditEntries);
  t.is(fixture.auditEntries, 4 + 2 * 3);
  t.deepEqual(report.instances.map((i) => i.instanceId).sort(), fixture.instances.map((i) => i.id).sort());
  for (const { counts } of report.instances) {
    t.like(counts, { instance: 1, spent: 3, messages: 43, media: 2, mediaBytes: 4096, authCreds: 1, authTables: 3, flow: 1, handovers: 1, conversations: 3, deliveries: 3, pendingDeliveries: 2, usageDays: FIXTURE_USAGE.days, usageSent: FIXTURE_USAGE.sent, usageDebited: FIXTURE_USAGE.debited });
  }

  const seen = await assertSameThroughPorts(t, dataDir, db.url);
  t.deepEqual(seen, { instances: 3, messages: 129, media: 6, deliveries: 9, settings: 2, webhookHeaders: 2, usageDays: 9, operators: 2, auditEntries: fixture.auditEntries });

  // On a node: the operators sign in with the passwords they had; the audit log goes on after the copied entries.
  const node = await openPostgresStorage({ url: db.url, config: loadConfig(dataDir), clock: systemClock, timers: systemTimers, logger: pino({ level: 'silent' }) });
  try {
    for (const o of fixture.operators) {
      const stored = await node.operators.get(o.name);
      t.is(stored?.role, o.role);
      t.true(await verifyPassword(o.password, stored?.passwordHash), `${o.name} signs in with its password`);
      t.false(await verifyPassword(`${o.password}x`, stored?.passwordHash));
    }
    const before = await node.audit.query({ limit: 1000 });
    const appended = { at: new Date().toISOString(), actor: 'secret', action: 'key.rotate', instanceId: fixture.instances[0]!.id, outcome: 'ok' };
    await node.audit.append(appended);
    const after = await node.audit.query({ limit: 1000 });
    t.deepEqual(after.entries, [appended, ...before.entries], 'a new entry comes first (newest), the copied ones after it');
  } finally {
    await node.close();
  }

  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  t.teardown(() => client.end());
  const owners = await client.query<{ owner: string; trial_instance_id: string }>('SELECT owner, trial_instance_id FROM owners ORDER BY owner');
  t.deepEqual(owners.rows.map((r) => [r.owner, r.trial_instance_id]), [['owner0', fixture.instances[0]!.id], ['owner1', fixture.instances[1]!.id]]);
  const config = loadConfig(dataDir);
  const gateway = await client.query<{ server_secret_hash: string; cluster_secret_hash: string; settings: unknown }>('SELECT server_secret_hash, cluster_secret_hash, settings FROM gateway');
  t.is(gateway.rows[0]?.server_secret_hash, config.serverSecretHash ?? undefined);
  t.true(verifySecret(fixture.secret, gateway.rows[0]!.server_secret_hash), 'the same X-API-Secret');
  t.true(verifySecret(clusterSecret, gateway.rows[0]!.cluster_secret_hash));
  t.deepEqual(gateway.rows[0]?.settings, JSON.parse(JSON.stringify({ plans: config.plans, webhooks: config.webhooks })) as unknown);
  const progress = await client.query<{ cluster_secret: string | null; completed_at: Date | null }>('SELECT cluster_secret, completed_at FROM files_migration');
  t.is(progress.rows[0]?.cluster_secret, null, 'the cluster secret is not kept once announced');
  t.truthy(progress.rows[0]?.completed_at);
});

test('a migration whose cluster secret was never shown (a kill right after completing) shows it on the next run, then refuses', async (t) => {
  const dataDir = await tempDir('gw-migrate-');
  const db = await freshDatabase();
  t.teardown(async () => {
    await rm(dataDir, { recursive: true, force: true });
    await db.drop();
  });
  await writeFilesFixture(dataDir, { instances: 1, messages: 4, media: 0 });
  const clusterSecret = generateClusterSecret();
  // The announcement fails as a closed stdout (or a kill) would: the secret stays kept.
  await t.throwsAsync(migrateDataDir({ dataDir, url: db.url, clusterSecret, announce: async () => Promise.reject(new Error('EPIPE')) }), { message: 'EPIPE' });
  const shown: MigrationReport[] = [];
  const again = await migrateDataDir({ dataDir, url: db.url, clusterSecret: generateClusterSecret(), announce: async (r) => void shown.push(r) });
  t.true(again.completedBefore);
  t.is(shown[0]?.clusterSecret, clusterSecret, 'the secret the gateway was created with');
  const third = migrateDataDir({ dataDir, url: db.url, clusterSecret: generateClusterSecret(), announce: async () => undefined });
  await t.throwsAsync(third, { code: 'CONFLICT', message: /migrated into that database already .* nothing to do/ });
});

test('a run interrupted while operators, the audit log and usage were copied is resumed: each copied again, nothing twice, nothing foreign left', async (t) => {
  t.timeout(120_000);
  const dataDir = await tempDir('gw-migrate-');
  const db = await freshDatabase();
  t.teardown(async () => {
    await rm(dataDir, { recursive: true, force: true });
    await db.drop();
  });
  const fixture = await writeFilesFixture(dataDir, { instances: 2, messages: 4, media: 0 });
  const [first] = fixture.instances;
  // Stopped once the gateway-wide kinds and the first instance are copied.
  const stop = new Error('interrupted');
  const interrupted = migrateDataDir({
    dataDir,
    url: db.url,
    clusterSecret: generateClusterSecret(),
    announce: async () => undefined,
    onProgress: (e) => {
      if (e.kind === 'instance') throw stop;
    },
  });
  await t.throwsAsync(interrupted, { is: stop });

  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  t.teardown(() => client.end());
  t.deepEqual((await client.query<{ done: string[] }>('SELECT done FROM files_migration')).rows[0]?.done, ['operators', 'audit']);
  t.is((await client.query<{ n: number }>('SELECT count(*)::int AS n FROM audit')).rows[0]?.n, fixture.auditEntries);
  // As a kill in the middle of these would leave them (and worse): part of the audit log, an entry
  // changed, an operator missing and one the files never had, usage counts that are not the files'.
  await client.query(`UPDATE files_migration SET done = '{}'`);
  await client.query('DELETE FROM audit WHERE seq % 2 = 0');
  await client.query(`UPDATE audit SET action = 'tampered' WHERE seq = 1`);
  await client.query(`DELETE FROM operators WHERE name = $1`, [fixture.operators[0]!.name]);
  await client.query(`INSERT INTO operators (name, doc) VALUES ('mallory', '{"name":"mallory"}')`);
  await client.query(`UPDATE usage_days SET sent = sent + 100 WHERE instance_id = $1`, [first!.id]);
  await client.query(`INSERT INTO usage_days (instance_id, day, sent, debited) VALUES ($1, '2001-01-01', 5, 5)`, [first!.id]);
  await client.query(`UPDATE files_migration_instances SET done = array_remove(done, 'usage') WHERE instance_id = $1`, [first!.id]);

  const events: string[] = [];
  const report = await migrateDataDir({ dataDir, url: db.url, clusterSecret: generateClusterSecret(), announce: async () => undefined, onProgress: (e) => void events.push(JSON.stringify(e)) });
  t.true(report.resumed);
  t.like(JSON.parse(events.find((e) => e.includes('"gateway"'))!), { copied: { operators: '2 operators', audit: `${fixture.auditEntries} audit log entries` }, earlier: [] });
  t.like(JSON.parse(events.find((e) => e.includes(first!.id))!), { copied: { usage: `${FIXTURE_USAGE.days} days of usage (${FIXTURE_USAGE.sent} messages sent)` } });
  const seen = await assertSameThroughPorts(t, dataDir, db.url);
  t.like(seen, { instances: 2, operators: 2, auditEntries: fixture.auditEntries, usageDays: 2 * FIXTURE_USAGE.days });
  const audit = await client.query<{ n: number; last: string }>('SELECT count(*)::int AS n, max(seq)::text AS last FROM audit');
  t.deepEqual(audit.rows[0], { n: fixture.auditEntries, last: String(fixture.auditEntries) }, 'each entry once, at its place');
  t.deepEqual((await client.query('SELECT name FROM operators ORDER BY name')).rows.map((r: { name: string }) => r.name), fixture.operators.map((o) => o.name).sort());
});

test('files changed between two runs: the check refuses to create the gateway and forgets what no longer matches; the next run copies it again', async (t) => {
  t.timeout(120_000);
  const dataDir = await tempDir('gw-migrate-');
  const db = await freshDatabase();
  t.teardown(async () => {
    await rm(dataDir, { recursive: true, force: true });
    await db.drop();
  });
  const fixture = await writeFilesFixture(dataDir, { instances: 2, messages: 10, media: 1 });
  // The first run stops once every kind of every instance is copied, before the check (as a kill would).
  const interrupted = await migrateDataDir({
    dataDir,
    url: db.url,
    clusterSecret: generateClusterSecret(),
    announce: async () => undefined,
    onProgress: (e) => {
      if (e.kind === 'instance' && e.index === e.of) throw new Error('interrupted');
    },
  }).catch((err: unknown) => err as Error);
  t.is((interrupted as Error).message, 'interrupted');
  // Someone starts the files daemon in between: a message more for the first instance.
  const id = fixture.instances[0]!.id;
  const files = await openFileStorage({ dataDir, config: loadConfig(dataDir), clock: systemClock, timers: systemTimers, logger: pino({ level: 'silent' }), guard: UNGUARDED });
  await files.messages.recordInbound(id, { messageId: '3EB0AFTERTHEFIRSTRUN0', chatId: '15550009999@s.whatsapp.net', isGroup: false, sender: '15550009999@s.whatsapp.net', from: '+15550009999', type: 'text', text: 'late', timestamp: new Date().toISOString() }, undefined);
  await files.close();

  const refused = await migrateDataDir({ dataDir, url: db.url, clusterSecret: generateClusterSecret(), announce: async () => undefined }).catch((err: unknown) => err as Error);
  t.regex((refused as Error).message, new RegExp(`the copy does not match the files \\(${id}: messages`));
  t.regex((refused as Error).message, /run the migration again \(it copies those again\)/);
  const gateway = await pgRows(db.url, 'SELECT count(*)::int AS n FROM gateway');
  t.is(gateway[0]!.n, 0, 'no gateway on a copy that does not match');

  const report = await migrateDataDir({ dataDir, url: db.url, clusterSecret: generateClusterSecret(), announce: async () => undefined });
  t.true(report.resumed);
  const other = fixture.instances[1]!.id;
  const count = (i: string) => report.instances.find((r) => r.instanceId === i)!.counts.messages;
  t.is(count(id), count(other) + 1, 'the late message is in the copy');
  await assertSameThroughPorts(t, dataDir, db.url);
});

async function pgRows(url: string, sql: string): Promise<Array<{ n: number }>> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<{ n: number }>(sql)).rows;
  } finally {
    await c.end();
  }
}
