/**
 * The webhook outbox port's contract (issue 22 item 1: one storage seam; the same test on every
 * engine): a delivery is stored once with its event and read back; outcomes are saved (durable or
 * lazy) and survive a reopen; a redelivery keeps the webhook-id; the history stays within its
 * bound and never loses a pending delivery; a reopen resumes what is pending in order per chat;
 * compaction under traffic loses nothing; and after a kill -9 every acknowledged append is there,
 * in order per chat.
 */
import { statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { GatewayEvent } from '../../src/events/types.js';
import { patchOf, type DeliveryPatch, type DeliveryRecord, type OutboxStore } from '../../src/storage/ports/outbox.js';
import type { Storage } from '../../src/storage/storage.js';
import { newDeliveryId, newDeliveryRecord } from '../../src/webhooks/delivery-record.js';
import { crashRun } from './crash.js';
import { engineTest } from './engines.js';

/** An instance id unknown to the store. */
const OTHER = 'inst_outbox00002';
const T0 = Date.UTC(2026, 0, 1);

function received(instanceId: string, chat: number, text: string, at: number): GatewayEvent {
  const iso = new Date(at).toISOString();
  const jid = `1555000${String(1000 + chat)}@s.whatsapp.net`;
  return {
    type: 'message.received',
    instanceId,
    timestamp: iso,
    data: { messageId: `M${text.replace(/[^A-Za-z0-9]/g, '')}`, chatId: jid, isGroup: false, sender: jid, from: `+1555000${String(1000 + chat)}`, type: 'text', text, timestamp: iso },
  };
}

const textOf = (e: GatewayEvent | null): string | undefined => (e?.type === 'message.received' ? e.data.text : undefined);

/** An instance in the store (an engine keeps outboxes of known instances only). */
async function newInstance(s: Storage): Promise<string> {
  return (await s.instances.create({ sandbox: true })).record.id;
}

/** What the scheduler does: records with increasing seq and createdAt. */
function records(instanceId: string) {
  let seq = 0;
  return (chat: number, text: string): DeliveryRecord => {
    const at = T0 + (seq + 1) * 1000;
    return newDeliveryRecord(received(instanceId, chat, text, at), newDeliveryId(at), ++seq, at);
  };
}

function finished(r: DeliveryPatch, at: number, status: 'delivered' | 'failed' = 'delivered'): DeliveryPatch {
  const iso = new Date(at).toISOString();
  return { ...patchOf(r), status, attempts: r.attempts + 1, lastAttemptAt: iso, lastStatus: status === 'delivered' ? 200 : 500, lastError: status === 'delivered' ? null : 'HTTP 500', nextAttemptAt: null, deliveredAt: status === 'delivered' ? iso : null, finishedAt: iso };
}

async function pendingTexts(store: OutboxStore, instanceId: string): Promise<Array<string | undefined>> {
  const { deliveries } = await store.loadPending(instanceId);
  return Promise.all(deliveries.map(async (d) => textOf(await store.readEvent(instanceId, d.id))));
}

engineTest('outbox: appended deliveries read back their events; list is newest first, with counts, filtered and limited', async (t, at) => {
  const s = await at.open();
  const ID = await newInstance(s);
  const next = records(ID);
  const all = [next(1, 'a1'), next(2, 'b1'), next(1, 'a2'), next(2, 'b2'), next(1, 'a3')];
  await Promise.all(all.map((r) => s.outbox.append(r)));
  for (const r of all) t.is(textOf(await s.outbox.readEvent(ID, r.id)), textOf(r.event));
  t.is(await s.outbox.readEvent(ID, 'msg_000000000unknown'), null);
  t.is(await s.outbox.readEvent(OTHER, all[0]!.id), null, 'keyed by instance first');

  const listed = await s.outbox.list(ID);
  t.deepEqual(listed.counts, { pending: 5, delivered: 0, failed: 0 });
  t.deepEqual(listed.deliveries.map((d) => d.id), [...all].reverse().map((r) => r.id));
  t.false('event' in listed.deliveries[0]!, 'a listing carries no bodies');
  t.deepEqual((await s.outbox.list(ID, { limit: 2 })).deliveries.map((d) => d.id), [all[4]!.id, all[3]!.id]);
  t.deepEqual((await s.outbox.list(ID, { status: 'delivered' })).deliveries, []);
  t.deepEqual((await s.outbox.list(OTHER)).counts, { pending: 0, delivered: 0, failed: 0 });

  const pending = await s.outbox.loadPending(ID);
  t.deepEqual(pending.deliveries.map((d) => d.id), all.map((r) => r.id), 'queue order (seq)');
  t.is(pending.lastSeq, 5);
  t.like(pending.deliveries[0], { lane: all[0]!.lane, status: 'pending', attempts: 0, instanceId: ID, type: 'message.received' });
  t.true((await s.outbox.instances()).includes(ID));
});

engineTest('outbox: outcomes are saved, durable and lazy, and survive a reopen', async (t, at) => {
  const s = await at.open();
  const ID = await newInstance(s);
  const next = records(ID);
  const [a, b, c] = [next(1, 'a'), next(2, 'b'), next(3, 'c')];
  for (const r of [a!, b!, c!]) await s.outbox.append(r);
  await s.outbox.saveOutcome(ID, finished(a!, T0 + 10_000), { durable: true });
  const retry: DeliveryPatch = { ...patchOf(b!), attempts: 1, lastAttemptAt: new Date(T0 + 10_000).toISOString(), lastStatus: 503, lastError: 'HTTP 503: busy', nextAttemptAt: new Date(T0 + 15_000).toISOString() };
  await s.outbox.saveOutcome(ID, retry, { durable: false });
  await s.outbox.saveOutcome(ID, { ...patchOf(c!), id: 'msg_000000000unknown' }, { durable: true });
  const check = async (store: OutboxStore, when: string) => {
    const listed = await store.list(ID);
    t.deepEqual(listed.counts, { pending: 2, delivered: 1, failed: 0 }, when);
    t.like(listed.deliveries.find((d) => d.id === a!.id), { status: 'delivered', attempts: 1, lastStatus: 200, nextAttemptAt: null }, when);
    t.like(listed.deliveries.find((d) => d.id === b!.id), { status: 'pending', attempts: 1, lastStatus: 503, lastError: 'HTTP 503: busy', nextAttemptAt: retry.nextAttemptAt }, when);
    t.deepEqual((await store.loadPending(ID)).deliveries.map((d) => d.id), [b!.id, c!.id], when);
    t.is(textOf(await store.readEvent(ID, a!.id)), 'a', `${when}: a finished delivery keeps its event (for a redelivery)`);
  };
  await check(s.outbox, 'before the reopen');
  await s.close();
  await check((await at.open()).outbox, 'after the reopen');
});

engineTest('outbox: requeue puts a finished delivery back with the same id (webhook-id) at the back; pending and unknown ones are left', async (t, at) => {
  const s = await at.open();
  const ID = await newInstance(s);
  const next = records(ID);
  const [a, b] = [next(1, 'a'), next(1, 'b')];
  await s.outbox.append(a!);
  await s.outbox.append(b!);
  await s.outbox.saveOutcome(ID, finished(a!, T0 + 10_000, 'failed'), { durable: true });
  const again = await s.outbox.requeue(ID, a!.id, { seq: 3, at: new Date(T0 + 20_000).toISOString() });
  t.is(again.outcome, 'requeued');
  if (again.outcome === 'not-found') return;
  t.like(again.state, { id: a!.id, seq: 3, status: 'pending', attempts: 0, lastError: null, lastStatus: null, finishedAt: null, redeliveries: 1, nextAttemptAt: new Date(T0 + 20_000).toISOString() });
  t.is((await s.outbox.requeue(ID, b!.id, { seq: 4, at: new Date(T0).toISOString() })).outcome, 'already-pending');
  t.is((await s.outbox.requeue(ID, 'msg_000000000unknown', { seq: 4, at: new Date(T0).toISOString() })).outcome, 'not-found');
  t.is((await s.outbox.requeue(ID, '../../config', { seq: 4, at: new Date(T0).toISOString() })).outcome, 'not-found');
  t.is((await s.outbox.requeue(OTHER, a!.id, { seq: 4, at: new Date(T0).toISOString() })).outcome, 'not-found');
  await s.close();
  const reopened = await at.open();
  const pending = await reopened.outbox.loadPending(ID);
  t.deepEqual(pending.deliveries.map((d) => [d.id, d.seq]), [[b!.id, 2], [a!.id, 3]], 'the redelivered one comes after b');
  t.is(pending.lastSeq, 3);
  t.is(textOf(await reopened.outbox.readEvent(ID, a!.id)), 'a');
});

engineTest('outbox: history is pruned oldest finished first, within its bound, never a pending delivery', async (t, at) => {
  const s = await at.open();
  const ID = await newInstance(s);
  const next = records(ID);
  const all = Array.from({ length: 70 }, (_, i) => next(i % 4, `h${i}`));
  for (const r of all) await s.outbox.append(r);
  const KEEP = 20;
  // The first 60 finish, in order; the last 10 stay pending.
  for (const [i, r] of all.slice(0, 60).entries()) {
    await s.outbox.saveOutcome(ID, finished(r, T0 + 100_000 + i * 1000), { durable: true });
    await s.outbox.pruneHistory(ID, KEEP);
  }
  const check = async (store: OutboxStore, when: string) => {
    const { counts, deliveries } = await store.list(ID);
    t.is(counts.pending, 10, `${when}: no pending delivery pruned`);
    t.true(counts.delivered >= KEEP && counts.delivered <= KEEP + Math.max(10, KEEP / 10), `${when}: history bounded (${counts.delivered})`);
    const kept = new Set(deliveries.map((d) => d.id));
    const finishedKept = all.slice(0, 60).filter((r) => kept.has(r.id)).map((r) => r.id);
    t.deepEqual(finishedKept, all.slice(60 - finishedKept.length, 60).map((r) => r.id), `${when}: the newest finished are kept`);
    t.deepEqual(await pendingTexts(store, ID), all.slice(60).map((r) => textOf(r.event)), when);
  };
  await check(s.outbox, 'before the reopen');
  await s.close();
  const again = await at.open();
  await check(again.outbox, 'after the reopen');
  await again.outbox.pruneHistory(ID, 0);
  t.true((await again.outbox.list(ID)).counts.delivered <= 10);
});

engineTest('outbox: deliveries dropped past the pending bound leave pending, also after a reopen, and can be redelivered', async (t, at) => {
  const s = await at.open();
  const ID = await newInstance(s);
  const next = records(ID);
  const all = Array.from({ length: 8 }, (_, i) => next(i, `p${i}`));
  for (const r of all) await s.outbox.append(r);
  // The scheduler's bound of 5: the oldest three are marked failed with a lazy write.
  const dropped = all.slice(0, 3).map((r) => ({ ...finished(r, T0 + 50_000, 'failed'), attempts: 0, lastStatus: null, lastError: 'dropped: more than 5 deliveries pending for this instance (webhooks.maxPendingPerInstance)' }));
  await Promise.all(dropped.map((p) => s.outbox.saveOutcome(ID, p, { durable: false })));
  await s.outbox.pruneHistory(ID, 200);
  await s.close();
  const again = await at.open();
  t.deepEqual((await again.outbox.loadPending(ID)).deliveries.map((d) => d.id), all.slice(3).map((r) => r.id));
  const { counts, deliveries } = await again.outbox.list(ID, { status: 'failed' });
  t.deepEqual(counts, { pending: 5, delivered: 0, failed: 3 });
  t.true(deliveries.every((d) => /maxPendingPerInstance/.test(d.lastError ?? '')));
  t.is((await again.outbox.requeue(ID, all[0]!.id, { seq: 9, at: new Date(T0).toISOString() })).outcome, 'requeued');
  t.is((await again.outbox.loadPending(ID)).deliveries.length, 6);
});

engineTest('outbox: a reopen resumes every pending delivery, in order per chat, with the seq to go on from', async (t, at) => {
  const s = await at.open();
  const ID = await newInstance(s);
  const next = records(ID);
  // Appends of five chats in flight together (one group commit for many), as events arrive.
  const all = Array.from({ length: 50 }, (_, i) => next(i % 5, `c${i % 5}-${Math.floor(i / 5)}`));
  await Promise.all(all.map((r) => s.outbox.append(r)));
  for (const r of all.filter((_, i) => i % 3 === 0)) await s.outbox.saveOutcome(ID, finished(r, T0 + 200_000), { durable: true });
  await s.close();
  const again = await at.open();
  const { deliveries, lastSeq } = await again.outbox.loadPending(ID);
  t.is(lastSeq, 50);
  t.deepEqual(deliveries.map((d) => d.id), all.filter((_, i) => i % 3 !== 0).map((r) => r.id));
  for (let chat = 0; chat < 5; chat++) {
    const lane = deliveries.filter((d) => d.lane === all[chat]!.lane);
    t.deepEqual(await Promise.all(lane.map(async (d) => textOf(await again.outbox.readEvent(ID, d.id)))), all.filter((r, i) => r.lane === all[chat]!.lane && i % 3 !== 0).map((r) => textOf(r.event)), `chat ${chat}`);
  }
});

/** Appends, outcomes and prunes of many deliveries with 1 KiB bodies; returns what should be pending. */
async function traffic(store: OutboxStore, ID: string, count: number): Promise<DeliveryRecord[]> {
  const next = records(ID);
  const pending: DeliveryRecord[] = [];
  const body = 'x'.repeat(1_000);
  for (let i = 0; i < count; i += 25) {
    const batch = Array.from({ length: 25 }, (_, j) => next((i + j) % 7, `t${i + j} ${body}`));
    await Promise.all(batch.map((r) => store.append(r)));
    // Most are delivered at once, every tenth waits (pending): the journal fills with history.
    for (const r of batch) {
      if (Number(r.seq) % 10 === 0) pending.push(r);
      else void store.saveOutcome(ID, finished(r, T0 + r.seq * 1000), { durable: true });
    }
    void store.pruneHistory(ID, 20);
  }
  return pending;
}

engineTest('outbox: compaction under traffic keeps every pending delivery and its event, and the store stays bounded', async (t, at) => {
  const s = await at.open();
  const ID = await newInstance(s);
  const pending = await traffic(s.outbox, ID, 3_000);
  const check = async (store: OutboxStore, when: string) => {
    const { deliveries } = await store.loadPending(ID);
    t.deepEqual(deliveries.map((d) => d.id), pending.map((r) => r.id), when);
    for (const r of pending) t.is(textOf(await store.readEvent(ID, r.id)), textOf(r.event), `${when}: ${r.id}`);
    t.true((await store.list(ID)).counts.delivered <= 30, when);
  };
  await check(s.outbox, 'before the reopen');
  await s.close();
  if (at.engine === 'files') {
    // 3,000 deliveries of 1 KiB went through the journal; it keeps about 330 of them.
    const size = (await stat(join(at.address, 'outbox', ID, 'outbox.jsonl'))).size;
    t.true(size < 2 * 1_048_576, `the journal was compacted (${size} bytes)`);
  }
  await check((await at.open()).outbox, 'after the reopen');
});

engineTest('outbox: after kill -9 under traffic every acknowledged append is there, in order per chat', async (t, at) => {
  t.timeout(90_000);
  type Ack = { chat: number; n: number; id: string; seq: number } | { finished: string };
  const first = await at.open();
  const ID = await newInstance(first);
  await first.close();
  // Killed past 2,000 appends, and on the files engine once a compaction has run under the traffic
  // (the journal smaller than what was appended): on a loaded machine the first compaction can take
  // longer than the first 2,000 appends (seen in CI on Node 24: 3.2 MB after 2,142), and the kill
  // must come after one, or the test does not test a compaction under traffic. At most 8,000.
  const file = join(at.address, 'outbox', ID, 'outbox.jsonl');
  let seen = 0;
  let appends = 0;
  const killWhen = (acks: readonly Ack[]): boolean => {
    for (; seen < acks.length; seen++) if ('chat' in acks[seen]!) appends += 1;
    if (appends < 2_000) return false;
    if (at.engine !== 'files' || appends >= 8_000) return true;
    try {
      return statSync(file).size < appends * 700;
    } catch {
      return false;
    }
  };
  const run = await crashRun<Ack>(at, 'outbox-appends', { instanceId: ID, chats: 6, bodyBytes: 700, finishBehind: 60 }, killWhen, 60_000);
  const appended = run.acks.filter((a): a is Extract<Ack, { chat: number }> => 'chat' in a);
  const finishing = new Set(run.acks.flatMap((a) => ('finished' in a ? [a.finished] : [])));
  t.true(appended.length >= 2_000, run.stderr);
  if (at.engine === 'files') {
    // The journal was compacted while the traffic ran (it holds far less than what was appended).
    const size = (await stat(join(at.address, 'outbox', ID, 'outbox.jsonl'))).size;
    t.true(size < appended.length * 700, `compacted under traffic: ${size} bytes after ${appended.length} appends of 700+ bytes`);
  }
  const s = await at.open();
  const { deliveries, lastSeq } = await s.outbox.loadPending(ID);
  const pending = new Map(deliveries.map((d) => [d.id, d]));
  const listed = new Set((await s.outbox.list(ID)).deliveries.map((d) => d.id));
  // Not finished by the child: pending, with its event. Finished: pending (its outcome was lost),
  // in the history, or pruned from it.
  const missing = appended.filter((a) => !finishing.has(a.id) && !pending.has(a.id));
  t.deepEqual(missing.slice(0, 5), [], `${missing.length} acknowledged appends lost`);
  for (const a of appended.filter((x) => !finishing.has(x.id)).slice(-50)) t.is((await s.outbox.readEvent(ID, a.id))?.type, 'qr.updated');
  t.true(appended.every((a) => pending.has(a.id) || listed.has(a.id) || finishing.has(a.id)));
  t.true(lastSeq >= Math.max(...appended.map((a) => a.seq)), 'lastSeq covers every acknowledged append');
  // Per chat, what is pending goes in the order it was appended.
  for (let chat = 0; chat < 6; chat++) {
    const seqs = deliveries.filter((d) => d.lane === `chat:${chat}`).map((d) => d.seq);
    t.deepEqual(seqs, [...seqs].sort((x, y) => x - y), `chat ${chat} in order`);
    const order = appended.filter((a) => a.chat === chat && pending.has(a.id)).map((a) => a.n);
    t.deepEqual(order, [...order].sort((x, y) => x - y), `chat ${chat}: acknowledged appends in order`);
  }
});

engineTest('outbox: removeInstance leaves nothing of it, also after a reopen', async (t, at) => {
  const s = await at.open();
  const ID = await newInstance(s);
  const OTHER = await newInstance(s);
  const mine = records(ID);
  const theirs = records(OTHER);
  await s.outbox.append(mine(1, 'gone'));
  const kept = theirs(1, 'kept');
  await s.outbox.append(kept);
  await s.outbox.removeInstance(ID);
  t.deepEqual((await s.outbox.list(ID)).counts, { pending: 0, delivered: 0, failed: 0 });
  await s.close();
  const again = await at.open();
  t.deepEqual((await again.outbox.loadPending(ID)).deliveries, []);
  t.false((await again.outbox.instances()).includes(ID));
  t.is(textOf(await again.outbox.readEvent(OTHER, kept.id)), 'kept');
});
