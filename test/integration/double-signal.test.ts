import '../protocol-double/preload.js';
import test from 'ava';
import {
  DEFAULT_CONNECTION_CONFIG,
  initAuthCreds,
  makeWASocket,
  proto,
  type AuthenticationCreds,
  type BaileysEventMap,
  type ConnectionState,
  type SignalKeyStore,
  type WASocket,
} from '@whiskeysockets/baileys';
import { pino } from 'pino';
import { ProtocolDouble } from '../protocol-double/index.js';
import { memoryKeys } from '../protocol-double/keys.js';
import { waitFor } from '../helpers/daemon.js';

// Real messages through the double with bare Baileys sockets (no gateway code): Signal sessions
// both ways (pkmsg then msg), receipts, LID senders with and without their number, groups with
// sender keys. Media needs the test CA in NODE_EXTRA_CA_CERTS at process start, so it is covered by
// the end-to-end tests (test/e2e/double-messages*.test.ts), which start the daemon as a child.

const logger = pino({ level: process.env.PROTOCOL_DOUBLE_DEBUG === '1' ? 'debug' : 'silent' });
// Baileys never clears the timers of queries pending when a socket ends (60 s by default).
DEFAULT_CONNECTION_CONFIG.defaultQueryTimeoutMs = 5000;

interface Client {
  sock: WASocket;
  creds: AuthenticationCreds;
  keys: SignalKeyStore;
  upserts: BaileysEventMap['messages.upsert'][];
  updates: BaileysEventMap['messages.update'];
  receipts: BaileysEventMap['message-receipt.update'];
  conn: Partial<ConnectionState>[];
}

function connect(double: ProtocolDouble, creds: AuthenticationCreds, keys: SignalKeyStore): Client {
  const sock = makeWASocket({ auth: { creds, keys }, logger, waWebSocketUrl: double.url, markOnlineOnConnect: false });
  const c: Client = { sock, creds, keys, upserts: [], updates: [], receipts: [], conn: [] };
  sock.ev.on('connection.update', (u) => c.conn.push(u));
  sock.ev.on('creds.update', (u) => Object.assign(creds, u));
  sock.ev.on('messages.upsert', (u) => c.upserts.push(u));
  sock.ev.on('messages.update', (u) => c.updates.push(...u));
  sock.ev.on('message-receipt.update', (u) => c.receipts.push(...u));
  return c;
}

async function paired(double: ProtocolDouble): Promise<Client> {
  const creds = initAuthCreds();
  const keys = memoryKeys();
  const first = connect(double, creds, keys);
  const qr = await waitFor(() => first.conn.find((u) => u.qr)?.qr, 10_000, 'a QR');
  await double.scan(qr);
  await waitFor(() => first.conn.some((u) => u.connection === 'close'), 10_000, 'the 515 close');
  const c = connect(double, creds, keys);
  await waitFor(() => c.conn.some((u) => u.connection === 'open'), 10_000, 'open');
  await double.synced();
  return c;
}

/**
 * Whether Baileys reported `status` for our message `id`: as a messages.update, or folded into the
 * message's own upsert. Baileys' event buffer does the latter when the receipt arrives while the
 * upsert of the send is still buffered (after a first login Baileys buffers until history sync or
 * the next processed stanza), so a client listening to messages.update alone misses it.
 */
const statusSeen = (c: Client, id: string, status: number): boolean =>
  c.updates.some((u) => u.key.id === id && u.update.status === status) ||
  c.upserts.some((u) => u.messages.some((m) => m.key.fromMe && m.key.id === id && m.status === status));
const receiptSeen = (c: Client, id: string, kind: 'receiptTimestamp' | 'readTimestamp'): boolean =>
  c.receipts.some((r) => r.key.id === id && r.receipt[kind]) ||
  c.upserts.some((u) => u.messages.some((m) => m.key.fromMe && m.key.id === id && m.userReceipt?.some((r) => r[kind])));
const received = (c: Client, id: string) => c.upserts.flatMap((u) => u.messages).find((m) => m.key.id === id);
const closeClient = async (c: Client) => {
  const closed = new Promise<void>((resolve) => c.sock.ev.on('connection.update', (u) => u.connection === 'close' && resolve()));
  c.sock.end(undefined);
  await closed;
};

test.serial('1:1 text both ways: pkmsg then msg, receipts become statuses, the contact sees the read receipt', async (t) => {
  const double = await ProtocolDouble.start();
  let c: Client | undefined;
  try {
    c = await paired(double);
    const alice = await double.contact('+15550000002', { name: 'Alice' });

    const sent = await c.sock.sendMessage(alice.jid, { text: 'hello alice' });
    const m1 = await alice.nextMessage();
    t.is(m1.id, sent!.key.id!);
    t.is(m1.text, 'hello alice');
    t.is(m1.encType, 'pkmsg');
    t.is(m1.chat, alice.jid);

    alice.receipt(m1, 'delivery');
    await waitFor(() => statusSeen(c!, m1.id, proto.WebMessageInfo.Status.DELIVERY_ACK), 10_000, 'delivered');
    alice.receipt(m1, 'read');
    await waitFor(() => statusSeen(c!, m1.id, proto.WebMessageInfo.Status.READ), 10_000, 'read');

    const replyId = await alice.sendText(double.accountJid(), 'hi gateway', { quoted: m1 });
    const reply = await waitFor(() => received(c!, replyId), 10_000, 'the reply upsert');
    t.is(reply.message?.extendedTextMessage?.text, 'hi gateway');
    t.is(reply.message?.extendedTextMessage?.contextInfo?.stanzaId, m1.id);
    t.is(reply.pushName, 'Alice');
    t.is(reply.key.remoteJid, alice.jid);
    // Baileys answered it with a delivery receipt (inactive: not online), which settles it on the server.
    const r = await alice.nextReceipt();
    t.deepEqual(r.ids, [replyId]);
    t.is(r.type, 'inactive');
    t.is(double.pending().length, 0);

    // The second message from the gateway uses the session the reply confirmed: msg, not pkmsg.
    await c.sock.sendMessage(alice.jid, { text: 'second' });
    const m2 = await alice.nextMessage();
    t.is(m2.text, 'second');
    t.is(m2.encType, 'msg');

    await c.sock.readMessages([reply.key]);
    const read = await alice.nextReceipt();
    t.is(read.type, 'read');
    t.deepEqual(read.ids, [replyId]);
    t.deepEqual(double.errors, []);
  } finally {
    if (c) await closeClient(c);
    await double.close();
  }
});

test.serial('LID senders: with the number (sender_pn) and without; the answer to a bare LID reaches it', async (t) => {
  const double = await ProtocolDouble.start();
  let c: Client | undefined;
  try {
    c = await paired(double);
    const bob = await double.contact('+15550000003', { addressing: 'lid' });
    const carol = await double.contact('+15550000004', { addressing: 'lid', alt: false });

    const b = await bob.sendText(double.accountJid(), 'from bob');
    const bm = await waitFor(() => received(c!, b), 3000, "bob's message");
    t.is(bm.key.remoteJid, bob.lid);
    t.is(bm.key.remoteJidAlt, bob.jid);
    t.is(await c.sock.signalRepository.lidMapping.getPNForLID(bob.lid), `${bob.phone.slice(1)}:0@s.whatsapp.net`);

    const k = await carol.sendText(double.accountJid(), 'from carol');
    const km = await waitFor(() => received(c!, k), 3000, "carol's message");
    t.is(km.key.remoteJid, carol.lid);
    t.falsy(km.key.remoteJidAlt);
    t.is(await c.sock.signalRepository.lidMapping.getPNForLID(carol.lid), null);

    await c.sock.sendMessage(carol.lid, { text: 'answer to a LID' });
    const answer = await carol.nextMessage();
    t.is(answer.text, 'answer to a LID');
    t.is(answer.chat, carol.lid);
    t.is(answer.encType, 'msg');
    t.deepEqual(double.errors, []);
  } finally {
    if (c) await closeClient(c);
    await double.close();
  }
});

test.serial('groups: metadata, all groups, a participant writes (sender key), the gateway writes (skmsg + SKDM), receipts per participant', async (t) => {
  const double = await ProtocolDouble.start();
  let c: Client | undefined;
  try {
    c = await paired(double);
    const alice = await double.contact('+15550000002', { name: 'Alice' });
    const bob = await double.contact('+15550000003', { name: 'Bob', addressing: 'lid' });
    const group = double.group('Team', [alice, bob], { description: 'the team', admins: [alice] });

    const meta = await c.sock.groupMetadata(group.jid);
    t.is(meta.subject, 'Team');
    t.is(meta.desc, 'the team');
    t.is(meta.participants.length, 3);
    t.is(meta.participants.find((p) => p.id === alice.lid)?.phoneNumber, alice.jid);
    t.is(meta.participants.find((p) => p.id === alice.lid)?.admin, 'admin');
    const all = await c.sock.groupFetchAllParticipating();
    t.deepEqual(Object.keys(all), [group.jid]);

    const inId = await alice.sendText(group.jid, 'hello group');
    const inMsg = await waitFor(() => received(c!, inId), 10_000, 'the group message');
    t.is(inMsg.key.remoteJid, group.jid);
    t.is(inMsg.key.participant, alice.lid);
    t.is(inMsg.key.participantAlt, alice.jid);
    t.is(inMsg.message?.conversation, 'hello group');
    // A second one needs no new sender key distribution.
    const inId2 = await alice.sendText(group.jid, 'again');
    t.is((await waitFor(() => received(c!, inId2), 10_000, 'the second group message')).message?.conversation, 'again');

    const out = await c.sock.sendMessage(group.jid, { text: 'hello team' });
    const [ma, mb] = await Promise.all([alice.nextMessage(), bob.nextMessage()]);
    for (const m of [ma, mb]) {
      t.is(m.id, out!.key.id!);
      t.is(m.text, 'hello team');
      t.is(m.chat, group.jid);
      t.true(m.isGroup);
    }
    alice.receipt(ma, 'read');
    await waitFor(() => receiptSeen(c!, ma.id, 'readTimestamp'), 10_000, 'group read receipt');
    t.deepEqual(double.errors, []);
  } finally {
    if (c) await closeClient(c);
    await double.close();
  }
});

test.serial('offline: what arrives while the device is away comes at the next login, marked offline; unacknowledged stanzas are kept', async (t) => {
  const double = await ProtocolDouble.start();
  let c: Client | undefined;
  try {
    c = await paired(double);
    const alice = await double.contact('+15550000002');
    const sent = await c.sock.sendMessage(alice.jid, { text: 'before going away' });
    const m = await alice.nextMessage();
    await closeClient(c);

    alice.receipt(m, 'delivery');
    const away = await alice.sendText(double.accountJid(), 'while away');
    t.is(double.pending().length, 2);

    c = connect(double, c.creds, c.keys);
    await waitFor(() => statusSeen(c!, sent!.key.id!, proto.WebMessageInfo.Status.DELIVERY_ACK), 10_000, 'the offline receipt');
    await waitFor(() => received(c!, away), 10_000, 'the offline message');
    t.is(c.upserts.find((u) => u.messages.some((x) => x.key.id === away))?.type, 'append');
    await waitFor(() => double.pending().length === 0, 10_000, 'both acknowledged');
    t.deepEqual(double.errors, []);
  } finally {
    if (c) await closeClient(c);
    await double.close();
  }
});

test.serial('retry receipts: a gateway that lost its session asks again, and the contact answers as a phone does until it decrypts', async (t) => {
  const double = await ProtocolDouble.start();
  let c: Client | undefined;
  try {
    c = await paired(double);
    const alice = await double.contact('+15550000002');
    await c.sock.sendMessage(alice.jid, { text: 'hello' });
    await alice.nextMessage();
    const first = await alice.sendText(double.accountJid(), 'one');
    await waitFor(() => received(c!, first), 10_000, 'the first reply');
    // The gateway forgets its session with the contact (as a crash before its keys were saved would).
    await c.keys.set({ session: { [c.sock.signalRepository.jidToSignalProtocolAddress(alice.lid)]: null } });

    const second = await alice.sendText(double.accountJid(), 'two');
    const m = await waitFor(() => c!.upserts.flatMap((u) => u.messages).find((x) => x.key.id === second && x.message), 15_000, 'the retried message');
    t.is(m.message?.conversation, 'two');
    t.deepEqual(
      alice.retries.map((r) => [r.count, r.answer]),
      [
        [1, 'same-session'],
        [2, 'new-session-from-receipt'],
      ],
    );
    t.deepEqual(double.errors, []);
  } finally {
    if (c) await closeClient(c);
    await double.close();
  }
});

test.serial('a PN-addressed group both ways, and a played receipt', async (t) => {
  const double = await ProtocolDouble.start();
  let c: Client | undefined;
  try {
    c = await paired(double);
    const alice = await double.contact('+15550000002', { name: 'Alice' });
    const bob = await double.contact('+15550000003', { name: 'Bob' });
    const group = double.group('Old style', [alice, bob], { addressingMode: 'pn' });
    const meta = await c.sock.groupMetadata(group.jid);
    t.is(meta.addressingMode as string, 'pn');
    t.deepEqual(meta.participants.map((p) => p.id).sort(), [alice.jid, bob.jid, double.accountJid()].sort());

    const inId = await bob.sendText(group.jid, 'pn hello');
    const inMsg = await waitFor(() => received(c!, inId), 10_000, 'the group message');
    t.is(inMsg.key.participant, bob.jid);
    t.is(inMsg.key.participantAlt, bob.lid);

    const out = await c.sock.sendMessage(group.jid, { text: 'pn answer' });
    const [ma, mb] = await Promise.all([alice.nextMessage(), bob.nextMessage()]);
    t.is(ma.text, 'pn answer');
    t.is(mb.id, out!.key.id!);
    bob.receipt(mb, 'played');
    await waitFor(() => receiptSeen(c!, mb.id, 'readTimestamp'), 10_000, 'played (Baileys reports it as read in groups)');

    await c.sock.sendMessage(alice.jid, { text: 'a voice note, say' });
    const v = await alice.nextMessage();
    alice.receipt(v, 'played');
    await waitFor(() => statusSeen(c!, v.id, proto.WebMessageInfo.Status.PLAYED), 10_000, 'played');
    t.deepEqual(double.errors, []);
  } finally {
    if (c) await closeClient(c);
    await double.close();
  }
});
