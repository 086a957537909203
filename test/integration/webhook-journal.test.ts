import { mkdir, readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import type { GatewayEvent } from '../../src/events/types.js';
import { newDeliveryId, newDeliveryRecord } from '../../src/webhooks/delivery-record.js';
import { completeLines, outboxPaths, parseLine } from '../../src/storage/files/outbox/files.js';
import type { FileOutboxStore } from '../../src/storage/files/outbox/store.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { inbound, outbox, setWebhook, startReceiver, waitForOutbox } from '../helpers/receiver.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function received(instanceId: string, text: string, at: number): GatewayEvent {
  const iso = new Date(at).toISOString();
  return {
    type: 'message.received',
    instanceId,
    timestamp: iso,
    data: { messageId: `OLD${at}`, chatId: '15550000001@s.whatsapp.net', isGroup: false, sender: '15550000001@s.whatsapp.net', from: '+15550000001', type: 'text', text, timestamp: iso },
  };
}

// Rule: an outbox written one file per delivery by an earlier version is migrated at start: its
// pending deliveries are sent (same webhook-id, in order), its finished ones are history and are
// not sent again, and the old files (and an old temp file) are gone.
test('an outbox of the one-file-per-delivery layout is migrated and delivered', async (t) => {
  const receiver = await startReceiver();
  const first = await startTestDaemon();
  let second: Awaited<ReturnType<typeof startTestDaemon>> | null = null;
  try {
    const inst = await first.connectedSandbox();
    await setWebhook(first, inst, receiver.url);
    await first.daemon.close();

    const paths = outboxPaths(first.dataDir);
    const dir = paths.instanceDir(inst.id);
    await mkdir(dir, { recursive: true });
    const now = Date.now();
    const done = { ...newDeliveryRecord(received(inst.id, 'done', now - 5), newDeliveryId(now - 5), 1, now - 5), status: 'delivered' as const, attempts: 1, lastStatus: 200, nextAttemptAt: null, deliveredAt: new Date(now).toISOString(), finishedAt: new Date(now).toISOString() };
    const p1 = newDeliveryRecord(received(inst.id, 'old-1', now - 4), newDeliveryId(now - 4), 2, now - 4);
    const p2 = newDeliveryRecord(received(inst.id, 'old-2', now - 3), newDeliveryId(now - 3), 3, now - 3);
    for (const r of [done, p2, p1]) await writeFile(paths.file(inst.id, r.id), JSON.stringify(r));
    const temp = join(dir, `.${p1.id}.json.1234.abcd.tmp`);
    await writeFile(temp, '{"half');
    const past = new Date(now - 120_000);
    await utimes(temp, past, past);

    second = await startTestDaemon({ dataDir: first.dataDir });
    await receiver.waitForCount(2);
    const records = await waitForOutbox(first.dataDir, inst.id, (r) => r.length === 3 && r.every((x) => x.status === 'delivered'));
    t.deepEqual(records.map((r) => r.id), [done.id, p1.id, p2.id]);
    t.deepEqual(receiver.requests.map((r) => [r.headers['webhook-id'], r.json.data.text]), [[p1.id, 'old-1'], [p2.id, 'old-2']]);
    t.deepEqual(await readdir(dir), ['outbox.jsonl']);
    const listed = await second.request('GET', `/api/${inst.id}/webhook/deliveries`, { key: inst.key });
    t.deepEqual(listed.body.counts, { pending: 0, delivered: 3, failed: 0 });
    await sleep(100);
    t.is(receiver.requests.length, 2, 'the finished one is not sent again');
  } finally {
    await second?.close();
    await first.close();
    await receiver.close();
  }
});

// Rule: the journal is compacted once it is mostly history (webhooks.historyPerInstance bounds
// what is kept); a compacted journal describes the same deliveries, also after a restart.
test('the journal is compacted to the deliveries it keeps, and reloads the same', async (t) => {
  const receiver = await startReceiver();
  const config = { webhooks: { allowPrivateTargets: true, historyPerInstance: 5 } };
  // Compaction past 8 KiB instead of 1 MiB: a test seam of the files engine's outbox.
  const smallJournals = (d: Awaited<ReturnType<typeof startTestDaemon>>) => ((d.core.storage.outbox as FileOutboxStore).compactMinBytes = 8_192);
  const first = await startTestDaemon({ config });
  smallJournals(first);
  let second: Awaited<ReturnType<typeof startTestDaemon>> | null = null;
  try {
    const inst = await first.connectedSandbox();
    await setWebhook(first, inst, receiver.url);
    for (let i = 1; i <= 80; i++) await inbound(first, inst, `+1555000000${i % 3}`, `c${i}`);
    await receiver.waitForCount(80);
    await waitForOutbox(first.dataDir, inst.id, (r) => r.every((x) => x.status === 'delivered') && r.some((x) => x.event.type === 'message.received' && x.event.data.text === 'c80'));
    const listed = async (d: NonNullable<typeof second>) => (await d.request('GET', `/api/${inst.id}/webhook/deliveries?limit=500`, { key: inst.key })).body.deliveries as Array<{ id: string; status: string }>;
    const before = await listed(first);
    t.true(before.length >= 5 && before.length <= 5 + 10, `history bounded (${before.length})`);
    t.is(before[0]!.id, receiver.requests.at(-1)?.headers['webhook-id'] as string, 'the newest is kept');
    await first.daemon.close();

    const file = outboxPaths(first.dataDir).journal(inst.id);
    const lines = completeLines(await readFile(file, 'utf8')).map((l) => parseLine(l));
    t.true(lines.length < 80, `compacted: ${lines.length} lines for 80 deliveries`);
    t.true((await stat(file)).size < 3 * 8_192, 'the file stays small');
    // A compacted journal starts with whole deliveries that carry their state so far.
    t.like(lines[0], { d: { status: 'delivered' } });

    second = await startTestDaemon({ dataDir: first.dataDir, config });
    smallJournals(second);
    t.deepEqual(await listed(second), before);
    t.deepEqual((await outbox(first.dataDir, inst.id)).map((r) => r.id).reverse(), before.map((r) => r.id));
    await sleep(100);
    t.is(receiver.requests.length, 80, 'nothing is sent again after the restart');
  } finally {
    await second?.close();
    await first.close();
    await receiver.close();
  }
});
