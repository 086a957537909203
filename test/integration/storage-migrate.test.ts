/**
 * Guards issue 23 item 6 (`gateway storage migrate --to URL`): what the PostgreSQL engine reads back
 * through its ports after a migration is what the files engine reads through the same ports:
 * instances and keys, the owners' trial records, credits (the interrupted hold released), every
 * chat and message with its status, edit, reactions and deletion (in order), media bytes, WhatsApp
 * auth state (creds and every key table), the flow, open handovers and conversation positions, and
 * the webhook outbox (pending and finished deliveries with their events and ids); and the gateway
 * record holds the data dir's server secret hash, a new cluster secret, its plans and webhook policy.
 */
import test from 'ava';
import { rm } from 'node:fs/promises';
import pg from 'pg';
import { generateClusterSecret } from '../../src/cluster/gateway-record.js';
import { loadConfig } from '../../src/config/load.js';
import { verifySecret } from '../../src/domain/secrets.js';
import { migrateDataDir, type MigrationReport } from '../../src/storage/migrate/run.js';
import { tempDir } from '../helpers/daemon.js';
import { writeFilesFixture } from '../helpers/files-fixture.js';
import { assertSameThroughPorts } from '../helpers/migrate-compare.js';
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
  t.deepEqual(report.instances.map((i) => i.instanceId).sort(), fixture.instances.map((i) => i.id).sort());
  for (const { counts } of report.instances) {
    t.like(counts, { instance: 1, spent: 3, messages: 43, media: 2, mediaBytes: 4096, authCreds: 1, authTables: 3, flow: 1, handovers: 1, conversations: 3, deliveries: 3, pendingDeliveries: 2 });
  }

  const seen = await assertSameThroughPorts(t, dataDir, db.url);
  t.deepEqual(seen, { instances: 3, messages: 129, media: 6, deliveries: 9 });

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
