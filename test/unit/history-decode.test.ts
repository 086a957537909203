import test, { type ExecutionContext } from 'ava';
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

/** Lean and generated decodes of `bytes` agree on everything but the messages' unread parts. */
function sameAsGenerated(t: ExecutionContext, bytes: Uint8Array): void {
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
}

for (const [name, bytes] of HISTORIES) {
  test(`${name}: decoded as the generated decoder does, each message kept to what processHistoryMessage reads`, (t) => {
    sameAsGenerated(t, bytes);
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

// Bytes no protobufjs encoder writes but a decoder must read: fields interleaved and repeated (a
// message's key twice: the last one counts), fields this schema does not know (every wire type,
// a group among them), a conversation's messages split around its other fields.
const varint = (n: number): number[] => {
  const out: number[] = [];
  for (; n > 0x7f; n = Math.floor(n / 128)) out.push((n & 0x7f) | 0x80);
  out.push(n);
  return out;
};
const field = (n: number, bytes: Uint8Array): Buffer => Buffer.concat([Buffer.from([...varint((n << 3) | 2), ...varint(bytes.length)]), bytes]);
const unknownFields = (): Buffer =>
  Buffer.from([
    ...varint((900 << 3) | 0), ...varint(123456),
    ...varint((901 << 3) | 1), 1, 2, 3, 4, 5, 6, 7, 8,
    ...varint((902 << 3) | 5), 1, 2, 3, 4,
    ...varint((903 << 3) | 2), 3, 0x61, 0x62, 0x63,
    ...varint((904 << 3) | 3), ...varint((1 << 3) | 0), 7, ...varint((904 << 3) | 4),
  ]); // prettier-ignore

function unusualBytes(): Buffer {
  const W = (o: proto.IWebMessageInfo) => proto.WebMessageInfo.encode(o).finish();
  const info = Buffer.concat([
    W({ key: { remoteJid: book[9]!.lid, id: 'FIRST', fromMe: false } }),
    W({ messageTimestamp: 1_700_000_100, message: { conversation: 'hello' } }),
    unknownFields(),
    W({ key: { remoteJid: book[9]!.lid, id: 'LAST', fromMe: true }, userReceipt: [{ userJid: book[9]!.jid }] }),
    W({ messageStubType: WAMessageStubType.BIZ_PRIVACY_MODE_TO_FB, messageStubParameters: ['Corp'] }),
  ]);
  const C = (o: proto.IConversation) => proto.Conversation.encode(o).finish();
  const chat = Buffer.concat([
    C({ id: book[9]!.lid }),
    field(2, Buffer.concat([field(1, info), Buffer.from(proto.HistorySyncMsg.encode({ msgOrderId: 3 }).finish())])),
    C({ unreadCount: 4, tcToken: Buffer.from('first') }),
    unknownFields(),
    C({ messages: [{ message: { key: { remoteJid: book[9]!.lid, id: 'SECOND', fromMe: false }, messageTimestamp: 1_700_000_050 } }] }),
    C({ name: 'Nine', tcToken: Buffer.from('last') }),
  ]);
  const H = (o: proto.IHistorySync) => proto.HistorySync.encode(o).finish();
  return Buffer.concat([
    H({ pushnames: [{ id: book[0]!.jid, pushname: 'Zero' }] }),
    field(2, chat),
    unknownFields(),
    H({ syncType: proto.HistorySync.HistorySyncType.RECENT, phoneNumberToLidMappings: [{ pnJid: book[1]!.jid, lidJid: book[1]!.lid }] }),
    field(2, C({ id: book[2]!.jid, messages: [] })),
    H({ chunkOrder: 9, pushnames: [{ id: book[3]!.jid, pushname: 'Three' }] }),
  ]);
}

test('bytes no encoder writes (fields interleaved, repeated, unknown, a group): decoded as the generated decoder does', (t) => {
  const bytes = unusualBytes();
  sameAsGenerated(t, bytes);
  const lean = decodeLeanHistorySync(bytes);
  t.is(lean.conversations[0]!.messages![0]!.message!.key!.id, 'LAST', 'a key given twice: the last');
  t.deepEqual(lean.pushnames.map((p) => p.pushname), ['Zero', 'Three']);
  const r = processHistoryMessage(lean);
  t.true(r.contacts.some((c) => c.verifiedName === 'Corp'));
});

test('malformed bytes throw, as with the generated decoder', (t) => {
  const bytes = recentHistory(REALISTIC_ACCOUNT, book);
  for (const bad of [bytes.subarray(0, 1000), bytes.subarray(0, bytes.length - 3), Buffer.from([0x12, 0xff, 0xff, 0x03, 0x01])]) {
    t.throws(() => proto.HistorySync.decode(bad));
    t.throws(() => decodeLeanHistorySync(bad));
  }
});

test.serial('installed: bytes the lean decoder refuses go to the generated one, whose answer stands', (t) => {
  const g = globalThis as Record<symbol, unknown>;
  const before = g[BAILEYS_HISTORY_DECODE_KEY];
  try {
    installLeanHistoryDecode();
    const installed = g[BAILEYS_HISTORY_DECODE_KEY] as (b: Uint8Array) => proto.HistorySync;
    // A conversation field with wire type 0 (a varint): the lean reader skips it and, having found
    // no conversation, hands the bytes to the generated decoder, which reads a length where there is
    // none and refuses them.
    const bad = Buffer.from([0x10, 0x05]);
    t.throws(() => proto.HistorySync.decode(bad));
    t.throws(() => installed(bad));
    // A conversation whose id claims more bytes than the conversation holds: the lean decoder
    // refuses it; the generated one reads past the conversation and decodes it (so it stands).
    const overrun = Buffer.from([0x12, 0x03, 0x0a, 0x05, 0x61, 0x62, 0x63, 0x64, 0x65]);
    t.throws(() => decodeLeanHistorySync(overrun));
    t.deepEqual(installed(overrun).toJSON(), proto.HistorySync.decode(overrun).toJSON());
  } finally {
    if (before === undefined) delete g[BAILEYS_HISTORY_DECODE_KEY];
    else g[BAILEYS_HISTORY_DECODE_KEY] = before;
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
