import test from 'ava';
import { join } from 'node:path';
import { EntryTable, type NewEntry } from '../../src/storage/files/messages/entry-table.js';
import { InstanceMessages } from '../../src/storage/files/messages/instance-messages.js';
import { MESSAGE_STATUSES } from '../../src/domain/vocabulary.js';
import { UNGUARDED } from '../../src/fs/write-guard.js';
import { tempDir } from '../helpers/daemon.js';

// Rule (issue "Performance, round 2", item 1, `rss_mb_10k`): the files engine's message index keeps
// a message in columns (bench/index-memory.ts: 216 -> 109 bytes a kept message), and that changes
// nothing a reader sees: every field reads back as written, a freed row reused by the next message
// carries nothing of the one before (its edit, reactions, votes, error, deleted mark).

const row = (id: string, over: Partial<NewEntry> = {}): NewEntry => ({
  id,
  chatId: '15550001111@s.whatsapp.net',
  fromMe: false,
  status: 'delivered',
  timestamp: 1_764_000_000_123,
  updatedAt: 1_764_000_000_456,
  offset: 5_000_000_000, // past 32 bits: a long journal
  length: 321,
  hasMedia: false,
  ...over,
});

test('every field reads back as written, each flag on its own', (t) => {
  const table = new EntryTable();
  for (const status of MESSAGE_STATUSES) {
    for (const fromMe of [false, true]) {
      for (const hasMedia of [false, true]) {
        const id = `${status}-${fromMe}-${hasMedia}`;
        const r = table.add(row(id, { status, fromMe, hasMedia, chatId: `${id}@s.whatsapp.net` }));
        t.like(table.entry(r), { id, status, fromMe, hasMedia, deleted: false, chatId: `${id}@s.whatsapp.net`, timestamp: 1_764_000_000_123, updatedAt: 1_764_000_000_456, offset: 5_000_000_000, length: 321 });
      }
    }
  }
  t.is(table.size, MESSAGE_STATUSES.length * 4);
  const r = table.row('read-true-true');
  table.markDeleted(r);
  table.setStatus(r, 'played');
  t.like(table.entry(r), { status: 'played', fromMe: true, hasMedia: true, deleted: true });
  table.setStatus(r, 'pending');
  t.like(table.entry(r), { status: 'pending', fromMe: true, hasMedia: true, deleted: true });
  t.is(table.row('nobody'), -1);
});

test('a freed row is reused and carries nothing of the message before it', (t) => {
  const table = new EntryTable();
  const first = table.add(row('A', { fromMe: true, hasMedia: true, status: 'failed' }));
  const x = table.extraFor(first);
  x.editedText = 'edited';
  x.reactions = new Map([['+1555', '👍']]);
  x.error = 'boom';
  table.markDeleted(first);
  table.remove(first);
  t.false(table.has('A'));
  const again = table.add(row('B'));
  t.is(again, first, 'the row is reused');
  t.deepEqual(table.entry(again), { ...row('B'), deleted: false });
  t.is(table.extra(again), undefined);
  table.remove(again);
  table.remove(again); // twice: nothing more happens
  t.is(table.size, 0);
});

test('the columns grow past their first size and keep what they held', (t) => {
  const table = new EntryTable();
  for (let i = 0; i < 1_000; i++) table.add(row(`M${i}`, { timestamp: i, offset: i * 300, length: i }));
  t.is(table.size, 1_000);
  t.deepEqual([...table.keys()].slice(0, 3), ['M0', 'M1', 'M2']);
  t.like(table.entry(table.row('M777')), { timestamp: 777, offset: 777 * 300, length: 777 });
});

test('through the journal: a message that takes the row of one reacted to, edited and deleted carries none of it', async (t) => {
  const file = join(await tempDir(), 'journal.jsonl');
  const now = Date.now();
  const evicted: string[] = [];
  const im = await InstanceMessages.open(file, { maxPerChat: 1, keepMs: 86_400_000 }, (id) => evicted.push(id), now, UNGUARDED);
  const message = (id: string, at: number) => ({ k: 'm' as const, messageId: id, chatId: '15550001111@s.whatsapp.net', fromMe: false, sender: '15550001111@s.whatsapp.net', from: '+15550001111', type: 'text' as const, status: 'delivered' as const, text: `text of ${id}`, timestamp: at, updatedAt: at });
  await im.write(message('OLD', now), true);
  const oldRow = im.entries.row('OLD');
  await im.write({ k: 'r', id: 'OLD', sender: '+15550002222', emoji: '❤️', at: now }, true);
  await im.write({ k: 'e', id: 'OLD', text: 'edited', at: now }, true);
  await im.write({ k: 'd', id: 'OLD', at: now }, true);
  // The chat keeps one: NEW comes in (a row of its own) and OLD goes; then THIRD comes in, takes
  // OLD's freed row, and NEW goes.
  await im.write(message('NEW', now + 1), true);
  await im.write(message('THIRD', now + 2), true);
  t.deepEqual(evicted, ['OLD', 'NEW']);
  t.is(im.entries.row('THIRD'), oldRow, 'THIRD reuses the row OLD had');
  const got = await im.message('THIRD');
  t.like(got, { messageId: 'THIRD', text: 'text of THIRD', status: 'delivered' });
  t.is(got?.reactions, undefined);
  t.is(got?.edited, undefined);
  t.is(got?.deleted, undefined);
  t.is(await im.message('OLD'), null);
  await im.close();
});

test('a line whose status is not one of ours is not taken into the index', async (t) => {
  const file = join(await tempDir(), 'journal.jsonl');
  const now = Date.now();
  const im = await InstanceMessages.open(file, { maxPerChat: 10, keepMs: 86_400_000 }, () => undefined, now, UNGUARDED);
  const bad = { k: 'm', messageId: 'ODD', chatId: '15550001111@s.whatsapp.net', fromMe: true, sender: null, from: null, type: 'text', status: 'exploded', timestamp: now, updatedAt: now };
  await im.write(bad as unknown as Parameters<typeof im.write>[0], true);
  t.false(im.entries.has('ODD'));
  await im.write({ k: 's', id: 'ODD', status: 'sent', at: now }, true);
  t.is(await im.message('ODD'), null);
  await im.close();
});
