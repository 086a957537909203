import test from 'ava';
import { makeEventBuffer, type BaileysEventMap, type WAMessage } from '@whiskeysockets/baileys';
import { attachAccountEvents } from '../../src/connection/baileys/contacts-events.js';
import { AccountBook } from '../../src/connection/baileys/account-book.js';
import type { SocketLike } from '../../src/connection/baileys/options.js';
import { pino } from 'pino';
import { silent } from './baileys-fake-socket.js';

// Rule (issue "Performance, round 2", item 3: no stall while phones pair): of a first login's history
// set only the chats enter Baileys' event buffer (whose `historyCache` keeps the key of everything
// that does, for the socket's life); its contacts name the account book when it arrives; app-state
// chat updates waiting for their history chat still find it; every other event is buffered and
// delivered as before, except that a live message is no longer folded into a history set. Baileys' own event buffer (`makeEventBuffer`, the object its socket calls
// `emit` on), not a stand-in.

type HistorySet = BaileysEventMap['messaging-history.set'];

function historySet(n: number): HistorySet {
  const messages = Array.from({ length: n }, (_, i) => ({ key: { remoteJid: '15550000001@s.whatsapp.net', id: `HIST${i}`, fromMe: false }, message: { conversation: `old ${i}` }, messageTimestamp: 1_700_000_000 + i }) as WAMessage);
  return {
    chats: [{ id: '15550000001@s.whatsapp.net', conversationTimestamp: 1_700_000_000 }],
    contacts: [{ id: '15550000001@s.whatsapp.net', notify: 'Walk-in' }, { id: '15550000002@s.whatsapp.net', name: 'Ana Silva' }],
    messages,
    syncType: 0,
    isLatest: true,
  } as HistorySet;
}

function setup(t: { teardown(fn: () => void): void }) {
  const ev = makeEventBuffer(silent);
  // buffer() arms a 30 s timer Baileys does not unref; destroy() clears it.
  t.teardown(() => ev.destroy());
  const book = new AccountBook();
  attachAccountEvents({ ev } as unknown as SocketLike, book, {}, silent);
  const seen: Partial<BaileysEventMap>[] = [];
  ev.process((map) => void seen.push(map));
  return { ev, book, seen };
}

test('a history set during the initial sync names the book at once; only its chats are buffered', (t) => {
  const { ev, book, seen } = setup(t);
  ev.buffer();
  ev.emit('messaging-history.set', historySet(2_000));
  t.is(book.nameOf('15550000001@s.whatsapp.net'), 'Walk-in', 'a push name known only from history');
  t.is(book.nameOf('15550000002@s.whatsapp.net'), 'Ana Silva');
  t.deepEqual(book.addressBook(), ['15550000002@s.whatsapp.net']);
  ev.emit('contacts.upsert', [{ id: '15550000003@s.whatsapp.net', name: 'Ben' }]);
  t.is(book.nameOf('15550000003@s.whatsapp.net'), undefined, 'other events still wait for the flush');
  t.true(ev.flush());
  t.deepEqual(seen.flatMap((map) => Object.keys(map)), ['messaging-history.set', 'contacts.upsert']);
  const flushed = seen[0]!['messaging-history.set']!;
  t.deepEqual([flushed.chats.map((c) => c.id), flushed.contacts, flushed.messages], [['15550000001@s.whatsapp.net'], [], []], 'chats only');
  t.is(book.nameOf('15550000003@s.whatsapp.net'), 'Ben');
});

test("an app-state chat update waiting for its history chat is absorbed into it, as Baileys' own flow does", (t) => {
  const { ev, seen } = setup(t);
  ev.buffer();
  // What Baileys' app-state sync emits during the initial sync (chat-utils getChatUpdateConditional):
  // an update that holds until the chat is known from history.
  const conditional = (data: { historySets: { chats: Record<string, unknown> } }) => (data.historySets.chats['15550000001@s.whatsapp.net'] ? true : undefined);
  ev.emit('chats.update', [{ id: '15550000001@s.whatsapp.net', archived: true, conditional } as unknown as BaileysEventMap['chats.update'][number]]);
  ev.emit('messaging-history.set', historySet(5));
  t.true(ev.flush());
  t.like(seen[0]!['messaging-history.set']!.chats[0], { id: '15550000001@s.whatsapp.net', archived: true });
  t.is(seen[0]!['chats.update'], undefined, 'nothing left waiting');
});

test('a later history set renames a contact at once, outside a flush', (t) => {
  const { ev, book } = setup(t);
  ev.buffer();
  ev.emit('messaging-history.set', historySet(10));
  t.true(ev.flush());
  const renamed = historySet(10);
  renamed.contacts = [{ id: '15550000001@s.whatsapp.net', name: 'Walk-in Customer' }];
  ev.buffer();
  ev.emit('messaging-history.set', renamed);
  t.is(book.nameOf('15550000001@s.whatsapp.net'), 'Walk-in Customer');
});

test('a book that throws is logged, never thrown into Baileys', (t) => {
  const ev = makeEventBuffer(silent);
  t.teardown(() => ev.destroy());
  const book = new AccountBook();
  book.contactsChanged = () => {
    throw new Error('broken');
  };
  const errors: unknown[] = [];
  const log = pino({ level: 'error' }, { write: (line: string) => void errors.push(JSON.parse(line)) });
  attachAccountEvents({ ev } as unknown as SocketLike, book, {}, log);
  t.notThrows(() => ev.emit('messaging-history.set', historySet(1)));
  t.like(errors, [{ msg: 'the contacts of a history sync were not taken' }]);
});

test("a live message with the key of a history message comes out as messages.upsert, not folded into the history set", (t) => {
  const { ev, seen } = setup(t);
  ev.buffer();
  ev.emit('messaging-history.set', historySet(3));
  const live = { key: { remoteJid: '15550000001@s.whatsapp.net', id: 'HIST1', fromMe: false }, message: { conversation: 'old 1' }, messageTimestamp: 1_700_000_500 } as WAMessage;
  ev.emit('messages.upsert', { messages: [live], type: 'notify' });
  t.true(ev.flush());
  t.deepEqual(seen[0]!['messages.upsert']?.messages.map((m) => m.key.id), ['HIST1']);
  t.deepEqual(seen[0]!['messaging-history.set']?.messages, []);
});
