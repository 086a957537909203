/**
 * The message port's contract (issue 22; issue 23: the same on PostgreSQL): statuses only move
 * forward and survive a reopen, edits/deletes/reactions merge into what is read, history is
 * bounded per chat and in days, without history only the lifecycle is kept, chats come newest
 * first with unread counts and pages of a chat go back with `before`, concurrent writers lose
 * nothing, and what was acknowledged survives kill -9. Issue 24: a chat the account deletes leaves
 * history with its media, durably, and other chats stay.
 */
import { ManualClock } from '../helpers/manual-time.js';
import { crashRun } from './crash.js';
import { engineTest, testConfig } from './engines.js';
import { outgoing } from './scenarios.js';
import type { InboundMessage } from '../../src/schemas/events.js';

const ID = 'inst_messages01';
const DAY = 86_400_000;

function inbound(messageId: string, chatId: string, at: number, extra: Partial<InboundMessage> = {}): InboundMessage {
  return { messageId, chatId, isGroup: chatId.endsWith('@g.us'), sender: '15550001111@s.whatsapp.net', from: '+15550001111', type: 'text', text: `said ${messageId}`, timestamp: new Date(at).toISOString(), ...extra };
}

engineTest('messages: a status only moves forward, and the message with its changes survives a reopen', async (t, at) => {
  const clock = new ManualClock(Date.now());
  const s = await at.open({ clock });
  const now = clock.now();
  await s.messages.recordOutgoing(ID, outgoing('OUT1', 'a@s.whatsapp.net', now, 'hello'), false);
  t.deepEqual(await s.messages.setStatus(ID, 'OUT1', 'sent', undefined, false), { messageId: 'OUT1', chatId: 'a@s.whatsapp.net', from: 'pending', to: 'sent' });
  t.truthy(await s.messages.setStatus(ID, 'OUT1', 'read'));
  t.is(await s.messages.setStatus(ID, 'OUT1', 'delivered'), null, 'never backwards');
  t.is(await s.messages.setStatus(ID, 'OUT1', 'failed', 'late'), null, 'failed only before delivery');
  t.is(await s.messages.setStatus(ID, 'NOPE', 'sent'), null, 'unknown message');
  await s.messages.recordOutgoing(ID, outgoing('OUT2', 'a@s.whatsapp.net', now + 1), true);
  t.deepEqual(await s.messages.setStatus(ID, 'OUT2', 'failed', 'no route'), { messageId: 'OUT2', chatId: 'a@s.whatsapp.net', from: 'pending', to: 'failed' });
  t.is(await s.messages.setStatus(ID, 'OUT2', 'delivered'), null, 'failed is final');
  // The same id again (an offline backlog repeats messages) changes nothing.
  await s.messages.recordOutgoing(ID, outgoing('OUT1', 'b@s.whatsapp.net', now + 2, 'other'), true);
  clock.advance(5);
  t.true(await s.messages.edited(ID, 'OUT1', 'hello, edited'));
  t.false(await s.messages.edited(ID, 'NOPE', 'x'));
  await s.messages.reaction(ID, 'OUT1', 'x@s.whatsapp.net', '👍');
  await s.messages.reaction(ID, 'OUT1', 'y@s.whatsapp.net', '❤️');
  await s.messages.reaction(ID, 'OUT1', 'y@s.whatsapp.net', '');
  await s.messages.recordInbound(ID, inbound('IN1', 'a@s.whatsapp.net', now + 3, { caption: 'a photo', text: undefined, type: 'image' }), { mimetype: 'image/jpeg', size: 3 });
  t.true(await s.messages.deleted(ID, 'IN1'));
  const expectOut1 = { ...outgoing('OUT1', 'a@s.whatsapp.net', now, 'hello, edited'), status: 'read' as const, updatedAt: now + 5, edited: true, reactions: { 'x@s.whatsapp.net': '👍' } };
  t.deepEqual(await s.messages.get(ID, 'OUT1'), expectOut1);
  t.is((await s.messages.get(ID, 'OUT2'))?.error, 'no route');
  t.is(await s.messages.chatOf(ID, 'OUT1'), 'a@s.whatsapp.net');
  await s.close();
  const again = await at.open({ clock });
  t.deepEqual(await again.messages.get(ID, 'OUT1'), expectOut1);
  const in1 = await again.messages.get(ID, 'IN1');
  t.is(in1?.deleted, true);
  t.is(in1?.caption, undefined);
  t.deepEqual(in1?.media, { mimetype: 'image/jpeg', size: 3 });
  t.is((await again.messages.get(ID, 'OUT2'))?.status, 'failed');
  t.deepEqual(await again.messages.chats(ID).then((cs) => cs.map((c) => c.chatId)), ['a@s.whatsapp.net']);
});

engineTest('messages: a chat keeps history.maxMessagesPerChat, the oldest go first, also after a reopen', async (t, at) => {
  const config = testConfig({ history: { maxMessagesPerChat: 3 } });
  const s = await at.open({ config });
  const now = Date.now();
  for (let i = 1; i <= 5; i++) await s.messages.recordOutgoing(ID, outgoing(`M${i}`, 'a@s.whatsapp.net', now + i), true);
  await s.messages.recordOutgoing(ID, outgoing('OTHER', 'b@s.whatsapp.net', now), true);
  const ids = async (st: typeof s): Promise<string[]> => ((await st.messages.chatMessages(ID, 'a@s.whatsapp.net', 10)) ?? { messages: [] }).messages.map((m) => m.messageId);
  t.deepEqual(await ids(s), ['M5', 'M4', 'M3']);
  t.is(await s.messages.get(ID, 'M2'), null);
  t.is(await s.messages.chatOf(ID, 'M1'), null);
  t.truthy(await s.messages.get(ID, 'OTHER'), 'other chats keep theirs');
  await s.close();
  const again = await at.open({ config });
  t.deepEqual(await ids(again), ['M5', 'M4', 'M3']);
});

engineTest('messages: the bound per chat holds across a removed chat, duplicate ids and batches of every size', async (t, at) => {
  // Issue 23: PostgreSQL keeps each chat's row count in memory so that eviction visits only the
  // rows past the bound; whatever changes the count (a removed chat, a duplicate, a reopen) must
  // leave the same rows as one write at a time would.
  const config = testConfig({ history: { maxMessagesPerChat: 3 } });
  let s = await at.open({ config });
  const now = Date.now();
  const chat = 'a@s.whatsapp.net';
  const ids = async (): Promise<string[]> => ((await s.messages.chatMessages(ID, chat, 10)) ?? { messages: [] }).messages.map((m) => m.messageId);
  for (let i = 1; i <= 2; i++) await s.messages.recordOutgoing(ID, outgoing(`M${i}`, chat, now + i), true);
  t.is(await s.messages.removeChat(ID, chat), 2);
  for (const id of ['N1', 'N2', 'N2', 'N3']) await s.messages.recordOutgoing(ID, outgoing(id, chat, now + 10), true);
  t.deepEqual(await ids(), ['N3', 'N2', 'N1'], 'a duplicate id is not counted');
  await s.messages.recordOutgoing(ID, outgoing('N4', chat, now + 11), true);
  t.deepEqual(await ids(), ['N4', 'N3', 'N2']);
  await Promise.all(['B1', 'B2', 'N4'].map((id, i) => s.messages.recordOutgoing(ID, outgoing(id, chat, now + 20 + i), true)));
  t.deepEqual(await ids(), ['B2', 'B1', 'N4'], 'a batch with a duplicate evicts only for what it stored');
  await s.close();
  s = await at.open({ config });
  await s.messages.recordOutgoing(ID, outgoing('R1', chat, now + 30), true);
  t.deepEqual(await ids(), ['R1', 'B2', 'B1'], 'after a reopen');
  await Promise.all(Array.from({ length: 5 }, (_, i) => s.messages.recordOutgoing(ID, outgoing(`C${i}`, chat, now + 40 + i), true)));
  t.deepEqual(await ids(), ['C4', 'C3', 'C2'], 'a batch larger than the bound keeps its newest');
  t.is(await s.messages.removeChat(ID, chat), 3);
  await s.messages.recordOutgoing(ID, outgoing('D1', chat, now + 50), true);
  t.deepEqual(await ids(), ['D1']);
});

engineTest('messages: writes made at the same moment (one batch on PostgreSQL) keep the bound per chat, and one message given two statuses at once keeps the later', async (t, at) => {
  // Issue 23: PostgreSQL writes the messages and statuses that arrive together as one statement;
  // the bound, the order and the status rules are those of one write at a time.
  const config = testConfig({ history: { maxMessagesPerChat: 4 } });
  const s = await at.open({ config });
  const now = Date.now();
  for (let i = 1; i <= 3; i++) await s.messages.recordOutgoing(ID, outgoing(`OLD${i}`, 'a@s.whatsapp.net', now + i), true);
  await Promise.all(Array.from({ length: 6 }, (_, i) => s.messages.recordOutgoing(ID, outgoing(`NEW${i}`, i < 5 ? 'a@s.whatsapp.net' : 'b@s.whatsapp.net', now + 10 + i), i % 2 === 0)));
  const page = await s.messages.chatMessages(ID, 'a@s.whatsapp.net', 10);
  t.deepEqual(page?.messages.map((m) => m.messageId), ['NEW4', 'NEW3', 'NEW2', 'NEW1'], 'the newest 4 of chat a, in the order they were stored');
  t.is(await s.messages.chatOf(ID, 'NEW5'), 'b@s.whatsapp.net');
  const [sent, delivered, back, unknown] = await Promise.all([
    s.messages.setStatus(ID, 'NEW4', 'sent', undefined, false),
    s.messages.setStatus(ID, 'NEW4', 'delivered', undefined, false),
    s.messages.setStatus(ID, 'NEW3', 'pending', undefined, false),
    s.messages.setStatus(ID, 'GONE', 'sent', undefined, false),
  ]);
  t.deepEqual(sent, { messageId: 'NEW4', chatId: 'a@s.whatsapp.net', from: 'pending', to: 'sent' });
  t.deepEqual(delivered, { messageId: 'NEW4', chatId: 'a@s.whatsapp.net', from: 'sent', to: 'delivered' });
  t.is(back, null, 'never backwards');
  t.is(unknown, null);
  await s.close();
  const again = await at.open({ config });
  t.is((await again.messages.get(ID, 'NEW4'))?.status, 'delivered');
  t.is(await again.messages.get(ID, 'NEW0'), null);
});

engineTest('messages: a pending record not yet written takes its statuses (forward only), is found by every read, and is stored by a close', async (t, at) => {
  // Issue 23: on PostgreSQL a lazy `pending` row of a send that stored its credit hold (`mayWait`)
  // waits a few ms for its status and is written once with it; the port's rules do not change.
  const s = await at.open();
  const now = Date.now();
  await s.messages.recordOutgoing(ID, outgoing('W1', 'w@s.whatsapp.net', now), false, { mayWait: true });
  const [found, chatOf] = await Promise.all([s.messages.get(ID, 'W1'), s.messages.chatOf(ID, 'W1')]);
  t.is(found?.status, 'pending', 'a read finds it at once');
  t.is(chatOf, 'w@s.whatsapp.net');
  await s.messages.recordOutgoing(ID, outgoing('W2', 'w@s.whatsapp.net', now + 1), false, { mayWait: true });
  const [back, sent, failedLate] = await Promise.all([
    s.messages.setStatus(ID, 'W2', 'pending', undefined, false),
    s.messages.setStatus(ID, 'W2', 'sent', undefined, false),
    s.messages.setStatus(ID, 'W2', 'failed', 'late', false),
  ]);
  t.is(back, null, 'never backwards');
  t.deepEqual(sent, { messageId: 'W2', chatId: 'w@s.whatsapp.net', from: 'pending', to: 'sent' });
  t.deepEqual(failedLate, { messageId: 'W2', chatId: 'w@s.whatsapp.net', from: 'sent', to: 'failed' }, 'failed may follow sent');
  await s.messages.recordOutgoing(ID, outgoing('W3', 'w@s.whatsapp.net', now + 2), false, { mayWait: true });
  t.deepEqual(await s.messages.setStatus(ID, 'W3', 'delivered'), { messageId: 'W3', chatId: 'w@s.whatsapp.net', from: 'pending', to: 'delivered' }, 'a durable receipt');
  await s.messages.recordOutgoing(ID, outgoing('W4', 'w@s.whatsapp.net', now + 3), false, { mayWait: true });
  await s.close();
  const again = await at.open();
  t.is((await again.messages.get(ID, 'W2'))?.status, 'failed');
  t.is((await again.messages.get(ID, 'W2'))?.error, 'late');
  t.is((await again.messages.get(ID, 'W3'))?.status, 'delivered');
  t.is((await again.messages.get(ID, 'W4'))?.status, 'pending', 'a clean close stores what waited');
  t.deepEqual((await again.messages.chatMessages(ID, 'w@s.whatsapp.net', 10))?.messages.map((m) => m.messageId), ['W4', 'W3', 'W2', 'W1']);
});

engineTest('messages: what is older than history.days is gone at the next start', async (t, at) => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const config = testConfig({ history: { days: 2 } });
  const s = await at.open({ clock, config });
  await s.messages.recordOutgoing(ID, outgoing('OLD', 'a@s.whatsapp.net', clock.now() - DAY), true);
  await s.messages.recordInbound(ID, inbound('NEW', 'b@s.whatsapp.net', clock.now() + DAY), undefined);
  t.truthy(await s.messages.get(ID, 'OLD'));
  await s.close();
  clock.advance(DAY + DAY / 2);
  const again = await at.open({ clock, config });
  t.is(await again.messages.get(ID, 'OLD'), null);
  t.truthy(await again.messages.get(ID, 'NEW'));
  t.deepEqual((await again.messages.chats(ID)).map((c) => c.chatId), ['b@s.whatsapp.net']);
});

engineTest('messages: without history only the lifecycle is kept (ids, chats, statuses), never what was said', async (t, at) => {
  const config = testConfig({ history: { enabled: false } });
  const s = await at.open({ config });
  t.false(s.messages.historyEnabled);
  const now = Date.now();
  await s.messages.recordOutgoing(ID, { ...outgoing('OUT1', 'a@s.whatsapp.net', now, 'secret words'), quoted: { messageId: 'X' } }, true);
  await s.messages.recordInbound(ID, inbound('IN1', 'a@s.whatsapp.net', now, { text: 'secret reply', fromName: 'Ann' }), undefined);
  await s.messages.edited(ID, 'IN1', 'secret edit');
  await s.messages.setStatus(ID, 'OUT1', 'delivered');
  await s.close();
  const again = await at.open({ config });
  const out = await again.messages.get(ID, 'OUT1');
  t.is(out?.status, 'delivered');
  t.is(out?.chatId, 'a@s.whatsapp.net');
  const all = JSON.stringify([out, await again.messages.get(ID, 'IN1'), await again.messages.chatMessages(ID, 'a@s.whatsapp.net', 10)]);
  t.false(all.includes('secret'), all);
  t.false(all.includes('"quoted"'));
});

engineTest('messages: chats come newest first with unread counts; a chat pages back with before', async (t, at) => {
  const s = await at.open();
  const now = Date.now();
  for (let i = 0; i < 5; i++) await s.messages.recordInbound(ID, inbound(`A${i}`, 'a@s.whatsapp.net', now + i, { fromName: 'Ann' }), undefined);
  await s.messages.recordOutgoing(ID, outgoing('B0', 'b@s.whatsapp.net', now + 10), true);
  await s.messages.recordInbound(ID, inbound('G0', 'g@g.us', now + 2, { fromName: 'In a group' }), undefined);
  const summary = async (): Promise<unknown[]> => (await s.messages.chats(ID)).map((c) => ({ chatId: c.chatId, name: c.name, isGroup: c.isGroup, lastMessageAt: c.lastMessageAt, unread: c.unread }));
  t.deepEqual(await summary(), [
    { chatId: 'b@s.whatsapp.net', name: undefined, isGroup: false, lastMessageAt: now + 10, unread: 0 },
    { chatId: 'a@s.whatsapp.net', name: 'Ann', isGroup: false, lastMessageAt: now + 4, unread: 5 },
    { chatId: 'g@g.us', name: undefined, isGroup: true, lastMessageAt: now + 2, unread: 1 },
  ]);
  await s.messages.markRead(ID, 'a@s.whatsapp.net');
  t.is((await s.messages.chats(ID)).find((c) => c.chatId === 'a@s.whatsapp.net')?.unread, 0);
  t.is((await s.messages.get(ID, 'A0'))?.status, 'read');

  const page1 = await s.messages.chatMessages(ID, 'a@s.whatsapp.net', 2);
  t.deepEqual(page1?.messages.map((m) => m.messageId), ['A4', 'A3']);
  t.is(page1?.nextBefore, 'A3');
  const page2 = await s.messages.chatMessages(ID, 'a@s.whatsapp.net', 2, page1!.nextBefore!);
  t.deepEqual(page2?.messages.map((m) => m.messageId), ['A2', 'A1']);
  const page3 = await s.messages.chatMessages(ID, 'a@s.whatsapp.net', 2, page2!.nextBefore!);
  t.deepEqual(page3, { messages: [await s.messages.get(ID, 'A0')], nextBefore: null });
  t.deepEqual(await s.messages.chatMessages(ID, 'a@s.whatsapp.net', 5), { messages: (await s.messages.chatMessages(ID, 'a@s.whatsapp.net', 10))!.messages, nextBefore: null });
  t.is(await s.messages.chatMessages(ID, 'nobody@s.whatsapp.net', 5), null, 'an unknown chat');
  t.deepEqual(await s.messages.chatMessages(ID, 'a@s.whatsapp.net', 5, 'B0'), { messages: [], nextBefore: null }, 'before from another chat');
});

engineTest('messages: removeChat forgets a chat, its messages and their media, also after a reopen; other chats stay', async (t, at) => {
  const s = await at.open();
  const now = Date.now();
  await s.messages.recordInbound(ID, inbound('X0', 'x@s.whatsapp.net', now, { type: 'image', text: undefined }), { mimetype: 'image/png', size: 3 });
  await s.media.put(ID, 'X0', { bytes: new Uint8Array([1, 2, 3]) }, now);
  await s.messages.recordOutgoing(ID, outgoing('X1', 'x@s.whatsapp.net', now + 1), true);
  await s.messages.recordInbound(ID, inbound('Y0', 'y@s.whatsapp.net', now + 2), undefined);
  t.is(await s.messages.removeChat(ID, 'x@s.whatsapp.net'), 2);
  t.is(await s.messages.removeChat(ID, 'x@s.whatsapp.net'), 0, 'nothing left to remove');
  t.is(await s.messages.removeChat(ID, 'nobody@s.whatsapp.net'), 0);
  const check = async (store: typeof s): Promise<void> => {
    t.deepEqual((await store.messages.chats(ID)).map((c) => c.chatId), ['y@s.whatsapp.net']);
    t.is(await store.messages.get(ID, 'X0'), null);
    t.is(await store.messages.chatMessages(ID, 'x@s.whatsapp.net', 10), null);
    t.truthy(await store.messages.get(ID, 'Y0'));
  };
  await check(s);
  await waitForMediaGone(s, 'X0');
  await s.close();
  const again = await at.open();
  await check(again);
  t.is(await again.media.get(ID, 'X0'), null);
  // The chat starts afresh when it is written to again.
  await again.messages.recordInbound(ID, inbound('X2', 'x@s.whatsapp.net', now + 3), undefined);
  t.deepEqual((await again.messages.chatMessages(ID, 'x@s.whatsapp.net', 10))?.messages.map((m) => m.messageId), ['X2']);
});

/** The files engine removes an evicted message's media in the background. */
async function waitForMediaGone(s: { media: { get(instanceId: string, messageId: string): Promise<unknown> } }, id: string): Promise<void> {
  for (let i = 0; i < 100 && (await s.media.get(ID, id)) !== null; i++) await new Promise((r) => setTimeout(r, 10));
}

engineTest('messages: 50 concurrent sends (pending, then sent) and receipts lose nothing', async (t, at) => {
  const s = await at.open();
  const now = Date.now();
  await Promise.all(
    Array.from({ length: 50 }, async (_, i) => {
      await s.messages.recordOutgoing(ID, outgoing(`C${i}`, `c${i % 7}@s.whatsapp.net`, now + i), false);
      await s.messages.setStatus(ID, `C${i}`, 'sent', undefined, false);
      if (i % 2 === 0) await s.messages.setStatus(ID, `C${i}`, 'delivered');
    }),
  );
  await s.close();
  const again = await at.open();
  for (let i = 0; i < 50; i++) t.is((await again.messages.get(ID, `C${i}`))?.status, i % 2 === 0 ? 'delivered' : 'sent');
  t.is((await again.messages.chats(ID)).length, 7);
});

engineTest('messages: a burst of premium sends (lazy lines, one send per turn) reads back at once and is all there after a reopen', async (t, at) => {
  // Premium sends wait on nothing durable: their lazy lines are coalesced (files: over a few ms), and
  // a read in the meantime must still find them, as must a clean close.
  const s = await at.open();
  const now = Date.now();
  for (let i = 0; i < 200; i++) {
    await s.messages.recordOutgoing(ID, outgoing(`P${i}`, `p${i % 5}@s.whatsapp.net`, now + i), false);
    await s.messages.setStatus(ID, `P${i}`, 'sent', undefined, false);
    if (i % 50 === 7) t.is((await s.messages.get(ID, `P${i}`))?.status, 'sent', 'readable before its lines are written');
    await new Promise((r) => setImmediate(r));
  }
  await s.close();
  const again = await at.open();
  for (let i = 0; i < 200; i++) t.is((await again.messages.get(ID, `P${i}`))?.status, 'sent', `P${i}`);
});

engineTest('messages: after kill -9 every acknowledged message is there (outgoing with its sent status)', async (t, at) => {
  const run = await crashRun<{ id: string; fromMe: boolean }>(at, 'messages', { id: ID, count: 5_000 }, (acks) => acks.length >= 60);
  t.true(run.acks.length >= 60, run.stderr);
  const s = await at.open();
  for (const a of run.acks) {
    const m = await s.messages.get(ID, a.id);
    t.truthy(m, `${a.id} was acknowledged`);
    t.is(m?.status, a.fromMe ? 'sent' : 'delivered');
  }
});
