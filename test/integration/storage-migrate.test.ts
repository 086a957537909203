/**
 * Guards issue 23 item 6 (`gateway storage migrate --to URL`): what the PostgreSQL engine reads back
 * through its ports after a migration is what the files engine reads through the same ports:
 * instances and keys, the owners' trial records, credits (the interrupted hold released), every
 * chat and message with its status, edit, reactions and deletion, media bytes, WhatsApp auth state
 * (creds and every key table), the flow, open handovers and conversation positions, and the webhook
 * outbox (pending and finished deliveries with their events and ids); and the gateway record holds
 * the data dir's server secret hash and its plans and webhook policy.
 */
import test from 'ava';
import { rm } from 'node:fs/promises';
import pg from 'pg';
import { pino } from 'pino';
import { generateClusterSecret, readGateway } from '../../src/cluster/gateway-record.js';
import { loadConfig } from '../../src/config/load.js';
import { systemClock } from '../../src/domain/clock.js';
import { systemTimers } from '../../src/domain/timers.js';
import { UNGUARDED } from '../../src/fs/write-guard.js';
import { openFileStorage } from '../../src/storage/files/index.js';
import { migrateDataDir, type MigrationReport } from '../../src/storage/migrate/run.js';
import { openPostgresStorage } from '../../src/storage/postgres/index.js';
import type { ChatSummary } from '../../src/storage/ports/messages.js';
import type { Storage } from '../../src/storage/storage.js';
import { verifySecret } from '../../src/domain/secrets.js';
import { tempDir } from '../helpers/daemon.js';
import { writeFilesFixture } from '../helpers/files-fixture.js';
import { freshDatabase } from '../helpers/postgres.js';

const keep = (_k: string, v: unknown): unknown => v;

async function bytesOf(storage: Storage, id: string, messageId: string): Promise<Buffer | null> {
  const m = await storage.media.get(id, messageId, Date.now());
  if (!m) return null;
  const chunks: Buffer[] = [];
  for await (const c of m.stream()) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

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
  let announced: MigrationReport | null = null;
  const report = await migrateDataDir({ dataDir, url: db.url, clusterSecret, announce: async (r) => void (announced = r) });
  t.is(announced, report);
  t.false(report.resumed);
  t.is(report.instances.length, 3);
  t.is(report.owners, 2);

  const config = loadConfig(dataDir);
  const files = await openFileStorage({ dataDir, config, clock: systemClock, timers: systemTimers, logger: pino({ level: 'silent' }), guard: UNGUARDED });
  const pgs = await openPostgresStorage({ url: db.url, config, clock: systemClock, timers: systemTimers, logger: pino({ level: 'silent' }) });
  t.teardown(async () => {
    await files.close();
    await pgs.close();
  });

  t.deepEqual(pgs.instances.list(), files.instances.list());
  for (const { id } of fixture.instances) {
    t.is(pgs.credits.balance(id), files.credits.balance(id), 'balance');
    t.is(pgs.credits.available(id), pgs.credits.balance(id), 'no hold copied');
    const counts = report.instances.find((r) => r.instanceId === id)!.counts;
    t.is(counts.spent, 3);

    const chats = await files.messages.chats(id);
    t.is(chats.length, 3);
    // The files engine's chats carry their message ids too; the port's summary is the rest.
    const summary = (c: ChatSummary): ChatSummary => ({ chatId: c.chatId, ...(c.name !== undefined ? { name: c.name } : {}), isGroup: c.isGroup, lastMessageAt: c.lastMessageAt, unread: c.unread });
    t.deepEqual((await pgs.messages.chats(id)).map(summary), chats.map(summary));
    let messages = 0;
    for (const chat of chats) {
      const page = await files.messages.chatMessages(id, chat.chatId, 1000);
      messages += page!.messages.length;
      t.deepEqual(await pgs.messages.chatMessages(id, chat.chatId, 1000), page);
      for (const m of page!.messages) {
        t.deepEqual(await pgs.messages.get(id, m.messageId), m);
        if (m.media) t.deepEqual(await bytesOf(pgs, id, m.messageId), await bytesOf(files, id, m.messageId));
      }
    }
    t.is(messages, 42);
    t.is(counts.messages, 42);
    t.is(counts.media, 2);

    t.deepEqual(await pgs.auth.read(id, keep), await files.auth.read(id, keep));
    t.true(await pgs.auth.isPaired(id));
    t.is(counts.authTables, 3);

    t.deepEqual(await pgs.flows.readFlow(id), await files.flows.readFlow(id));
    t.deepEqual(await pgs.flows.readHandovers(id), await files.flows.readHandovers(id));
    t.deepEqual(await pgs.flows.readConversations(id), await files.flows.readConversations(id));
    t.is((await pgs.flows.readHandovers(id)).size, 1);

    const listing = await files.outbox.list(id);
    t.deepEqual(listing.counts, { pending: 2, delivered: 1, failed: 0 });
    t.deepEqual(await pgs.outbox.list(id), listing);
    t.deepEqual(await pgs.outbox.loadPending(id), { ...(await files.outbox.loadPending(id)) });
    for (const d of listing.deliveries) t.deepEqual(await pgs.outbox.readEvent(id, d.id), await files.outbox.readEvent(id, d.id));
  }
  t.deepEqual((await pgs.flows.instancesWithHandovers()).sort(), fixture.instances.map((i) => i.id).sort());

  // The owners' trial records, and the gateway record.
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  t.teardown(() => client.end());
  const owners = await client.query<{ owner: string; trial_instance_id: string }>('SELECT owner, trial_instance_id FROM owners ORDER BY owner');
  t.deepEqual(owners.rows.map((r) => [r.owner, r.trial_instance_id]), [['owner0', fixture.instances[0]!.id], ['owner1', fixture.instances[1]!.id]]);
  const gateway = await readGateway(pgs.db);
  t.is(gateway?.serverSecretHash, config.serverSecretHash);
  t.true(verifySecret(fixture.secret, gateway!.serverSecretHash!), 'the same X-API-Secret');
  t.true(verifySecret(clusterSecret, gateway!.clusterSecretHash));
  t.deepEqual(gateway?.settings, JSON.parse(JSON.stringify({ plans: config.plans, webhooks: config.webhooks })) as unknown);
  const progress = await client.query<{ cluster_secret: string | null; completed_at: Date | null }>('SELECT cluster_secret, completed_at FROM files_migration');
  t.is(progress.rows[0]?.cluster_secret, null, 'the cluster secret is not kept once announced');
  t.truthy(progress.rows[0]?.completed_at);
});
