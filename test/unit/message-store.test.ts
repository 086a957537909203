import test from 'ava';
import { join } from 'node:path';
import { pino } from 'pino';
import { MediaFiles } from '../../src/storage/files/media.js';
import { MessageStore } from '../../src/storage/files/messages/store.js';
import { systemTimers } from '../../src/domain/timers.js';
import { ManualClock } from '../helpers/manual-time.js';
import { tempDir } from '../helpers/daemon.js';
import { UNGUARDED } from '../../src/fs/write-guard.js';

// Rule (messages are facts): an outgoing message's status never goes backwards, survives a
// restart, and history is bounded per chat and by age.

const ID = 'inst_storetest1';

async function store(dir: string, clock: ManualClock, maxPerChat = 200, enabled = true) {
  const media = new MediaFiles(join(dir, 'media'), { keepMs: 7 * 86_400_000, maxBytesPerInstance: 1_000_000 }, UNGUARDED);
  return new MessageStore({ guard: UNGUARDED, root: join(dir, 'messages'), history: { enabled, days: 30, maxMessagesPerChat: maxPerChat }, media, clock, timers: systemTimers, logger: pino({ level: 'silent' }) });
}

function outgoing(id: string, chatId: string, now: number) {
  return { messageId: id, chatId, fromMe: true, sender: null, from: null, type: 'text' as const, status: 'pending' as const, text: `hello ${id}`, timestamp: now, updatedAt: now };
}

test('statuses only move forward, and each forward step is reported once', async (t) => {
  const dir = await tempDir();
  const clock = new ManualClock();
  const s = await store(dir, clock);
  await s.recordOutgoing(ID, outgoing('M1', '15551234567@s.whatsapp.net', clock.now()), true);
  t.like(await s.setStatus(ID, 'M1', 'sent'), { from: 'pending', to: 'sent' });
  t.like(await s.setStatus(ID, 'M1', 'read'), { from: 'sent', to: 'read' });
  t.is(await s.setStatus(ID, 'M1', 'delivered'), null, 'delivered after read is a step back');
  t.is(await s.setStatus(ID, 'M1', 'read'), null, 'the same status again is not news');
  t.is(await s.setStatus(ID, 'M1', 'failed'), null, 'a read message cannot fail');
  t.is(await s.setStatus(ID, 'NOPE', 'read'), null, 'unknown messages are ignored');
  t.is((await s.get(ID, 'M1'))?.status, 'read');
  await s.stop();
  const again = await store(dir, clock);
  t.is((await again.get(ID, 'M1'))?.status, 'read', 'the status survives a restart');
  t.is((await again.get(ID, 'M1'))?.text, 'hello M1');
  await again.stop();
});

test('a chat keeps at most maxMessagesPerChat messages, newest first in pages', async (t) => {
  const dir = await tempDir();
  const clock = new ManualClock();
  const s = await store(dir, clock, 5);
  const chat = '15551234567@s.whatsapp.net';
  for (let i = 0; i < 8; i++) {
    clock.advance(1000);
    await s.recordOutgoing(ID, outgoing(`M${i}`, chat, clock.now()), true);
  }
  const first = await s.chatMessages(ID, chat, 3);
  t.deepEqual(first?.messages.map((m) => m.messageId), ['M7', 'M6', 'M5']);
  const second = await s.chatMessages(ID, chat, 3, first!.nextBefore!);
  t.deepEqual(second?.messages.map((m) => m.messageId), ['M4', 'M3']);
  t.is(second?.nextBefore, null);
  t.is(await s.get(ID, 'M0'), null, 'the oldest went');
  await s.stop();
});

test('messages older than history.days are dropped at load', async (t) => {
  const dir = await tempDir();
  const clock = new ManualClock();
  const s = await store(dir, clock);
  await s.recordOutgoing(ID, outgoing('OLD', '15551234567@s.whatsapp.net', clock.now()), true);
  await s.stop();
  clock.advance(31 * 86_400_000);
  const again = await store(dir, clock);
  t.is(await again.get(ID, 'OLD'), null);
  t.deepEqual(await again.chats(ID), []);
  await again.stop();
});

test('edits, deletes and reactions overlay the stored message and survive compaction', async (t) => {
  const dir = await tempDir();
  const clock = new ManualClock();
  const s = await store(dir, clock);
  const chat = '15551234567@s.whatsapp.net';
  await s.recordInbound(ID, { messageId: 'IN1', chatId: chat, isGroup: false, sender: chat, from: '+15551234567', type: 'text', text: 'first', timestamp: new Date(clock.now()).toISOString() }, undefined);
  await s.edited(ID, 'IN1', 'second');
  await s.reaction(ID, 'IN1', 'me', '👍');
  t.like(await s.get(ID, 'IN1'), { text: 'second', edited: true, reactions: { me: '👍' }, status: 'delivered' });
  await s.compact(ID);
  t.like(await s.get(ID, 'IN1'), { text: 'second', edited: true, reactions: { me: '👍' } }, 'compaction merged the changes into the message');
  await s.markRead(ID, chat);
  t.is((await s.chats(ID))[0]?.unread, 0);
  await s.deleted(ID, 'IN1');
  const deleted = await s.get(ID, 'IN1');
  t.true(deleted?.deleted);
  t.is(deleted?.text, undefined, 'a deleted message shows no text');
  await s.stop();
  const again = await store(dir, clock);
  t.like(await again.get(ID, 'IN1'), { deleted: true, status: 'read' });
  await again.stop();
});

test('with history off only the lifecycle is kept, not what was said', async (t) => {
  const dir = await tempDir();
  const clock = new ManualClock();
  const s = await store(dir, clock, 200, false);
  await s.recordOutgoing(ID, outgoing('M1', '15551234567@s.whatsapp.net', clock.now()), true);
  await s.setStatus(ID, 'M1', 'delivered');
  const m = await s.get(ID, 'M1');
  t.is(m?.status, 'delivered');
  t.is(m?.text, undefined);
  await s.stop();
});
