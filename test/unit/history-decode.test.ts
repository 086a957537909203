import test from 'ava';
import { inflateSync } from 'node:zlib';
import { downloadAndProcessHistorySyncNotification, processHistoryMessage, proto, WAMessageStubType } from '@whiskeysockets/baileys';
import { BAILEYS_HISTORY_DECODE_KEY, decodeLeanHistorySync, installLeanHistoryDecode } from '../../src/connection/baileys/history-decode.js';
import { addressBook, bootstrapHistory, pushNameHistory, recentHistory, REALISTIC_ACCOUNT, type GroupRef } from '../protocol-double/account-data.js';

// Issue 26 item 3 (no stall while phones pair): a first login's history sync is decoded without the
// content of its messages, which the gateway drops (contacts-events.ts keeps a history set's
// contacts). The rule: everything else decodes as Baileys' generated decoder decodes it, each message
// keeps what Baileys' processHistoryMessage reads (key, timestamp, stub type and parameters, user
// receipts), processHistoryMessage gives the same chats, contacts and LID mappings either way, and
// once installed Baileys' own history path asks the gateway's decoder (patches/). That a daemon
// learns names and LID mappings from a real Baileys' history sync through it is proven against the
// protocol double by test/integration/double-account.test.ts (its daemon installs it).

const book = addressBook(REALISTIC_ACCOUNT.contacts);
const groups: GroupRef[] = [0, 1].map((g) => ({ jid: `12036300000000${g}@g.us`, subject: `Group ${g}`, members: book.slice(g * 10, g * 10 + 8) }));

/** A history with what the double's do not carry: stubs, receipts, a LID chat without its phone, status messages, past participants. */
function unusualHistory(): Buffer {
  const lidChat = book[5]!.lid;
  const info = (id: string, extra: proto.IWebMessageInfo = {}): proto.IHistorySyncMsg => ({
    message: { key: { remoteJid: lidChat, fromMe: true, id }, messageTimestamp: 1_700_000_000, message: { conversation: `text ${id}` }, pushName: 'Me', status: proto.WebMessageInfo.Status.READ, ...extra },
    msgOrderId: 7,
  });
  return Buffer.from(
    proto.HistorySync.encode({
      syncType: proto.HistorySync.HistorySyncType.RECENT,
      conversations: [
        {
          id: lidChat,
          unreadCount: 3,
          tcToken: Buffer.from('token'),
          messages: [
            info('A1', { userReceipt: [{ userJid: book[5]!.jid, receiptTimestamp: 1_700_000_001 }] }),
            info('A2', { key: { remoteJid: lidChat, fromMe: false, id: 'A2', participant: book[6]!.lid }, messageStubType: WAMessageStubType.BIZ_PRIVACY_MODE_TO_BSP, messageStubParameters: ['Shop Ltd', 'x'] }),
          ],
        },
        { id: book[7]!.jid, lidJid: book[7]!.lid, displayName: 'Seven', messages: [] },
      ],
      statusV3Messages: [{ key: { remoteJid: 'status@broadcast', id: 'S1' }, message: { conversation: 'a status' } }],
      pastParticipants: [{ groupJid: groups[0]!.jid, pastParticipants: [{ userJid: book[1]!.jid, leaveReason: 0, leaveTs: 1_700_000_000 }] }],
      pushnames: [{ id: book[0]!.jid, pushname: 'Zero' }],
      phoneNumberToLidMappings: [{ pnJid: book[0]!.jid, lidJid: book[0]!.lid }],
      chunkOrder: 4,
      progress: 50,
    }).finish(),
  );
}

const HISTORIES: Array<[string, Buffer]> = [
  ['RECENT (195 chats, 1,975 messages)', recentHistory(REALISTIC_ACCOUNT, book)],
  ['INITIAL_BOOTSTRAP (groups, LID mappings)', inflateSync(bootstrapHistory(groups, book, []))],
  ['PUSH_NAME', pushNameHistory(book)],
  ['stubs, receipts, status messages, past participants', unusualHistory()],
];

const plain = (m: { toJSON(): Record<string, unknown> }): Record<string, unknown> => m.toJSON();
/** The JSON of a decoded message with one repeated field left out. */
function without<T extends { toJSON(): Record<string, unknown> }>(m: T, field: keyof T): Record<string, unknown> {
  const kept = m[field];
  (m as Record<keyof T, unknown>)[field] = [];
  try {
    return m.toJSON();
  } finally {
    m[field] = kept;
  }
}
/** What processHistoryMessage reads of a message, as the generated decoder gives it. */
const readPart = (m: proto.IWebMessageInfo | null | undefined) =>
  m ? { key: m.key ? plain(proto.MessageKey.fromObject(m.key)) : null, messageTimestamp: m.messageTimestamp?.toString(), messageStubType: m.messageStubType ?? undefined, messageStubParameters: m.messageStubParameters?.length ? m.messageStubParameters : undefined, userReceipt: m.userReceipt?.length ? m.userReceipt.map((u) => plain(proto.UserReceipt.fromObject(u))) : undefined } : null;

for (const [name, bytes] of HISTORIES) {
  test(`${name}: decoded as the generated decoder does, each message kept to what processHistoryMessage reads`, (t) => {
    const full = proto.HistorySync.decode(bytes);
    const lean = decodeLeanHistorySync(bytes);
    t.deepEqual(without(lean, 'conversations'), without(full, 'conversations'), 'every field but the conversations');
    t.is(lean.conversations.length, full.conversations.length);
    full.conversations.forEach((chat, i) => {
      const mine = lean.conversations[i]!;
      t.true(mine instanceof proto.Conversation);
      t.deepEqual(without(mine as proto.Conversation, 'messages'), without(chat as proto.Conversation, 'messages'), `chat ${chat.id}`);
      t.deepEqual((mine.messages ?? []).map((m) => readPart(m.message)), (chat.messages ?? []).map((m) => readPart(m.message)), `messages of ${chat.id}`);
      for (const m of mine.messages ?? []) t.false(m.message != null && 'message' in m.message, 'no content');
    });
  });

  test(`${name}: processHistoryMessage gives the same chats, contacts and LID mappings from either`, (t) => {
    const a = processHistoryMessage(proto.HistorySync.decode(bytes));
    const b = processHistoryMessage(decodeLeanHistorySync(bytes));
    t.deepEqual(b.contacts, a.contacts);
    t.deepEqual(b.lidPnMappings, a.lidPnMappings);
    t.is(b.syncType, a.syncType);
    t.deepEqual(b.messages.map(readPart), a.messages.map(readPart));
    const chats = (r: typeof a) => r.chats.map((c) => ({ ...without(c as proto.Conversation, 'messages'), lastMessageRecvTimestamp: c.lastMessageRecvTimestamp, last: c.messages?.map((m) => readPart(m.message)) }));
    t.deepEqual(chats(b), chats(a));
  });
}

test('the unusual history: its business name, receipt phone number and chats reach processHistoryMessage', (t) => {
  const r = processHistoryMessage(decodeLeanHistorySync(unusualHistory()));
  t.true(r.contacts.some((c) => c.verifiedName === 'Shop Ltd'), 'BIZ_PRIVACY stub: verified name');
  t.true(r.lidPnMappings.some((m) => m.lid === book[5]!.lid && m.pn === book[5]!.jid), 'a LID chat without pnJid: its phone from a user receipt');
  t.true(r.lidPnMappings.some((m) => m.lid === book[7]!.lid && m.pn === book[7]!.jid));
  t.is(r.chats.length, 2);
});

test('malformed bytes throw, as with the generated decoder', (t) => {
  const bytes = recentHistory(REALISTIC_ACCOUNT, book);
  for (const bad of [bytes.subarray(0, 1000), bytes.subarray(0, bytes.length - 3), Buffer.from([0x12, 0xff, 0xff, 0x03, 0x01])]) {
    t.throws(() => proto.HistorySync.decode(bad));
    t.throws(() => decodeLeanHistorySync(bad));
  }
});

test.serial("installed, Baileys' history path (an inline bootstrap) decodes through it; without it, whole", async (t) => {
  const g = globalThis as Record<symbol, unknown>;
  const before = g[BAILEYS_HISTORY_DECODE_KEY];
  // Deflated, as WhatsApp sends it.
  const inline = { initialHistBootstrapInlinePayload: bootstrapHistory(groups, book, []), syncType: proto.HistorySync.HistorySyncType.INITIAL_BOOTSTRAP };
  try {
    delete g[BAILEYS_HISTORY_DECODE_KEY];
    const whole = await downloadAndProcessHistorySyncNotification(inline, {});
    t.true(whole.messages.every((m) => m.message != null), 'upstream: with content');
    installLeanHistoryDecode();
    let calls = 0;
    const installed = g[BAILEYS_HISTORY_DECODE_KEY] as (b: Uint8Array) => proto.HistorySync;
    g[BAILEYS_HISTORY_DECODE_KEY] = (b: Uint8Array) => (calls++, installed(b));
    const lean = await downloadAndProcessHistorySyncNotification(inline, {});
    t.is(calls, 1);
    t.true(lean.messages.length > 0 && lean.messages.every((m) => !('message' in m)), 'the messages without content');
    t.deepEqual(lean.contacts, whole.contacts);
    t.deepEqual(lean.lidPnMappings, whole.lidPnMappings);
    t.deepEqual(lean.messages.map(readPart), whole.messages.map(readPart));
  } finally {
    if (before === undefined) delete g[BAILEYS_HISTORY_DECODE_KEY];
    else g[BAILEYS_HISTORY_DECODE_KEY] = before;
  }
});
