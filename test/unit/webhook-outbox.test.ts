import { appendFile, mkdir, readFile, readdir, readlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { pino } from 'pino';
import { systemClock } from '../../src/domain/clock.js';
import type { GatewayEvent } from '../../src/events/types.js';
import type { WriteGuard } from '../../src/fs/write-guard.js';

/** A guard the tests can make refuse writes (as a lost lock, or a full disk, would). */
const failing = { now: false };
const testGuard: WriteGuard = {
  assertHeld() {
    if (failing.now) throw new Error('disk full (test)');
  },
};
import { completeLines, fullLine, outboxPaths, parseLine, readInstanceDeliveries } from '../../src/storage/files/outbox/files.js';
import { FileOutboxStore, type FileOutboxOptions } from '../../src/storage/files/outbox/store.js';
import { RecordLog, type Loc } from '../../src/storage/files/record-log.js';
import { patchOf, type DeliveryRecord } from '../../src/storage/ports/outbox.js';
import { newDeliveryId, newDeliveryRecord } from '../../src/webhooks/delivery-record.js';
import { Outbox } from '../../src/webhooks/outbox.js';
import { tempDir } from '../helpers/daemon.js';

// The files engine's outbox (src/storage/files/outbox/): its journal, compaction, migration and
// file handles. What every engine must do is in test/storage/outbox.contract.test.ts.

const INSTANCE = 'inst_unit0outbox';

function event(text: string, phone = '+15550000001'): GatewayEvent {
  const now = new Date().toISOString();
  return {
    type: 'message.received',
    instanceId: INSTANCE,
    timestamp: now,
    data: { messageId: `M${text.replace(/[^A-Za-z0-9]/g, '')}`, chatId: `${phone.slice(1)}@s.whatsapp.net`, isGroup: false, sender: `${phone.slice(1)}@s.whatsapp.net`, from: phone, type: 'text', text, timestamp: now },
  };
}

const textOf = (e: GatewayEvent): string => (e.type === 'message.received' ? (e.data.text ?? '') : '');

const silent = pino({ level: 'silent' });

async function outboxIn(dataDir: string, options: Partial<FileOutboxOptions> = {}): Promise<FileOutboxStore> {
  const store = new FileOutboxStore({ dataDir, guard: testGuard, logger: silent, instanceExists: () => true, ...options });
  await store.load();
  return store;
}

let seq = 0;
/** Stores a new delivery of `e` (as the scheduler does: the next seq). */
async function append(store: FileOutboxStore, e: GatewayEvent): Promise<DeliveryRecord> {
  const now = Date.now();
  const record = newDeliveryRecord(e, newDeliveryId(now), ++seq, now);
  await store.append(record);
  return record;
}

/** Records a 200 for a delivery, durably. */
function delivered(store: FileOutboxStore, r: DeliveryRecord): Promise<void> {
  const at = new Date().toISOString();
  return store.saveOutcome(r.instanceId, { ...patchOf(r), status: 'delivered', attempts: 1, lastStatus: 200, deliveredAt: at, finishedAt: at, nextAttemptAt: null }, { durable: true });
}

const pendingCount = async (store: FileOutboxStore, id = INSTANCE): Promise<number> => (await store.loadPending(id)).deliveries.length;

// Rule: a failed journal write is never acknowledged, and the outbox goes on once the disk does
// (the journal is reopened from what is on disk; the deliveries stored before are kept).
test.serial('a write that fails is refused, and the next one reopens the journal', async (t) => {
  const dataDir = await tempDir();
  const outbox = await outboxIn(dataDir);
  await append(outbox, event('before'));
  failing.now = true;
  try {
    await t.throwsAsync(append(outbox, event('refused')), { message: /disk full/ });
  } finally {
    failing.now = false;
  }
  await append(outbox, event('after'));
  t.is(await pendingCount(outbox), 2);
  await outbox.close();
  const stored = await readInstanceDeliveries(outboxPaths(dataDir), INSTANCE);
  t.deepEqual(stored.map((r) => textOf(r.event)), ['before', 'after']);
  const again = await outboxIn(dataDir);
  t.is(await pendingCount(again), 2);
  await again.close();
});

// Rule: a torn tail (a crash in the middle of a write, never acknowledged) is cut at start; what
// comes before it is kept and new lines follow it cleanly.
test('a torn last line is cut at load and the journal goes on after it', async (t) => {
  const dataDir = await tempDir();
  const paths = outboxPaths(dataDir);
  const first = await outboxIn(dataDir);
  const a = await append(first, event('a'));
  const b = await append(first, event('b'));
  await first.close();
  await appendFile(paths.journal(INSTANCE), '{"d":{"v":1,"id":"msg_torn');
  const second = await outboxIn(dataDir);
  t.is(await pendingCount(second), 2);
  t.true((await readFile(paths.journal(INSTANCE), 'utf8')).endsWith('\n'), 'the torn tail is gone');
  await append(second, event('c'));
  t.is(textOf((await second.readEvent(INSTANCE, a.id))!), 'a');
  t.is(textOf((await second.readEvent(INSTANCE, b.id))!), 'b');
  await second.close();
  const stored = await readInstanceDeliveries(paths, INSTANCE);
  t.deepEqual(stored.map((r) => textOf(r.event)), ['a', 'b', 'c']);
});

// Rule: a delivery's event is read back from the journal once it is no longer cached, also after
// a compaction moved its line.
test('events are read back from the journal after compactions moved them', async (t) => {
  const dataDir = await tempDir();
  const outbox = await outboxIn(dataDir, { compactMinBytes: 2_048 });
  const pending: DeliveryRecord[] = [];
  for (let i = 0; i < 40; i++) pending.push(await append(outbox, event(`p${i}`, `+1555000${String(1000 + i)}`)));
  // Finish most of them so that the journal is mostly history and gets compacted.
  for (const r of pending.slice(0, 35)) {
    await delivered(outbox, r);
    await outbox.pruneHistory(INSTANCE, 2);
  }
  await outbox.close();
  const lines = completeLines(await readFile(outboxPaths(dataDir).journal(INSTANCE), 'utf8'));
  t.true(lines.length < 40 + 35, `compacted (${lines.length} lines)`);
  const again = await outboxIn(dataDir, { compactMinBytes: 2_048 });
  t.is(await pendingCount(again), 5);
  for (const [i, r] of pending.slice(35).entries()) t.is(textOf((await again.readEvent(INSTANCE, r.id))!), `p${35 + i}`);
  const listed = await again.list(INSTANCE);
  t.true(listed.counts.delivered <= 2 + 10);
  await again.close();
});

// Rule: lines written while a compaction runs are neither lost nor reordered, whenever they
// arrive (while the snapshot is written, or while the tail is copied and the file renamed), and
// their locations are kept up to date.
test('lines appended during a compaction follow the snapshot in order', async (t) => {
  const dir = await tempDir();
  const file = join(dir, 'outbox.jsonl');
  const line = (id: string) => JSON.stringify({ x: [id] });
  const places = new Map<string, Loc>();
  // The old lines the snapshot saw on disk. A lazy one still queued when the compaction read the
  // file is not in the snapshot's bytes: it stays in the tail, after the snapshot (CI on Node 24
  // once caught the last old line there).
  const oldSeen = new Set<string>();
  const owner = {
    relocate: () => undefined,
    // Keeps one line for the old ones, and the newer lines already on disk as they are.
    snapshot: (data: Buffer) => {
      const all = completeLines(data.toString('utf8'));
      for (const l of all) if (l.includes('msg_old')) oldSeen.add((JSON.parse(l) as { x: string[] }).x[0]!);
      const live = all.filter((l) => l.includes('msg_during'));
      const lines = [line('msg_kept0000001'), ...live];
      return {
        lines,
        placed: (locs: Loc[], tailFrom: number, shift: number) => {
          for (const [id, loc] of places) if (loc.offset >= tailFrom) places.set(id, { offset: loc.offset + shift, length: loc.length });
          lines.forEach((l, i) => {
            const id = (JSON.parse(l) as { x: string[] }).x[0]!;
            if (places.has(id)) places.set(id, locs[i]!);
          });
        },
      };
    },
  };
  const { log } = await RecordLog.open(file, owner, testGuard);
  const oldIds: string[] = [];
  for (let i = 0; i < 20; i++) {
    oldIds.push(`msg_old00000${String(i).padStart(2, '0')}`);
    await log.append(line(oldIds[i]!), i % 2 === 0);
  }
  const compaction = log.compact();
  t.true(log.compacting);
  const during: Promise<void>[] = [];
  const ids: string[] = [];
  for (let i = 0; log.compacting || i < 3; i++) {
    const id = `msg_during${String(i).padStart(5, '0')}`;
    ids.push(id);
    during.push(log.append(line(id), i % 3 === 0, (loc) => places.set(id, loc)));
    await new Promise((r) => setImmediate(r));
  }
  await compaction;
  await Promise.all(during);
  await log.close();
  const text = await readFile(file, 'utf8');
  t.deepEqual(
    completeLines(text).map((l) => (JSON.parse(l) as { x: string[] }).x[0]),
    ['msg_kept0000001', ...oldIds.filter((id) => !oldSeen.has(id)), ...ids],
  );
  for (const id of ids) {
    const loc = places.get(id)!;
    t.is(text.slice(loc.offset, loc.offset + loc.length), line(id), `${id} is where it was said to be`);
  }
});

// Rule: deliveries stored one file each by earlier versions are moved into the journal at load
// (durably, then the files are deleted); one already in the journal (a crash mid-migration) is
// not duplicated; torn old files are removed once old.
test('one-file deliveries of the old layout are moved into the journal', async (t) => {
  const dataDir = await tempDir();
  const paths = outboxPaths(dataDir);
  const dir = paths.instanceDir(INSTANCE);
  await mkdir(dir, { recursive: true });
  const now = Date.now();
  const old1 = newDeliveryRecord(event('old-1'), newDeliveryId(now), 1, now);
  const old2 = newDeliveryRecord(event('old-2'), newDeliveryId(now + 1), 2, now + 1);
  const done = { ...newDeliveryRecord(event('done'), newDeliveryId(now - 10), 0, now - 10), status: 'delivered' as const, deliveredAt: new Date(now).toISOString(), finishedAt: new Date(now).toISOString(), nextAttemptAt: null, attempts: 1, lastStatus: 200 };
  for (const r of [old1, old2, done]) await writeFile(paths.file(INSTANCE, r.id), JSON.stringify(r));
  // old2 was already moved by a start that crashed before deleting the files.
  await writeFile(paths.journal(INSTANCE), `${fullLine(old2)}\n`);
  const outbox = await outboxIn(dataDir);
  t.is(await pendingCount(outbox), 2);
  const listed = (await outbox.list(INSTANCE)).deliveries.sort((a, b) => a.seq - b.seq);
  t.deepEqual(listed.map((r) => [r.id, r.status]), [[done.id, 'delivered'], [old1.id, 'pending'], [old2.id, 'pending']]);
  t.deepEqual(await readdir(dir), ['outbox.jsonl']);
  const lines = completeLines(await readFile(paths.journal(INSTANCE), 'utf8')).map((l) => parseLine(l));
  t.is(lines.length, 3, 'old2 is not written twice');
  // The scheduler over this store: queue order (seq) kept, old-2 waits behind old-1.
  const lanes = new Outbox({ store: outbox, maxPendingPerInstance: 100, historyPerInstance: 10, clock: systemClock, monotonic: () => performance.now(), maxRetryDelayMs: 1_000, logger: silent, instanceExists: () => true });
  await lanes.load();
  t.deepEqual([...lanes.get(INSTANCE)!.heads()].map((d) => d.id), [old1.id], 'queue order (seq) kept: old-2 waits behind old-1');
  await outbox.close();
});

// Rule: an outbox journal is a file handle; past maxOpenJournals the least recently written ones
// with nothing pending are closed, and reopened (same content) at their next event.
test('idle journals past maxOpenJournals are closed and reopened on their next event', async (t) => {
  const dataDir = await tempDir();
  const outbox = await outboxIn(dataDir, { maxOpenJournals: 2 });
  const ids = ['inst_unit0lru001', 'inst_unit0lru002', 'inst_unit0lru003', 'inst_unit0lru004'];
  const openJournals = async () => {
    let n = 0;
    for (const fd of await readdir('/proc/self/fd')) {
      const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
      if (target.startsWith(dataDir) && target.endsWith('outbox.jsonl')) n += 1;
    }
    return n;
  };
  const deliverOne = async (instanceId: string, text: string) => {
    const r = await append(outbox, { ...event(text), instanceId } as GatewayEvent);
    await delivered(outbox, r);
  };
  for (const id of ids) await deliverOne(id, `first ${id}`);
  await new Promise((r) => setTimeout(r, 50));
  t.is(await openJournals(), 2);
  // The first instance's journal was closed: its next event reopens it.
  await deliverOne(ids[0]!, 'second');
  t.deepEqual((await outbox.list(ids[0]!)).deliveries.map((r) => r.status), ['delivered', 'delivered']);
  // A pending delivery keeps its journal open whatever the limit.
  const pending = await append(outbox, { ...event('pending'), instanceId: ids[1]! } as GatewayEvent);
  for (const id of [ids[2]!, ids[3]!]) await deliverOne(id, 'again');
  await new Promise((r) => setTimeout(r, 50));
  t.is(textOf((await outbox.readEvent(ids[1]!, pending.id))!), 'pending');
  await outbox.close();
  t.is(await openJournals(), 0);
  for (const id of ids) {
    const texts = (await readInstanceDeliveries(outboxPaths(dataDir), id)).map((r) => textOf(r.event));
    t.deepEqual(texts, id === ids[0] ? [`first ${id}`, 'second'] : id === ids[1] ? [`first ${id}`, 'pending'] : [`first ${id}`, 'again']);
  }
});
