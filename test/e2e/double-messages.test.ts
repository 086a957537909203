import test from 'ava';
import { randomBytes } from 'node:crypto';
import { proto } from '@whiskeysockets/baileys';
import { startGatewayOnDouble, type GatewayOnDouble } from '../protocol-double/child.js';
import { randomPng } from '../protocol-double/fixtures.js';
import { waitFor } from '../helpers/daemon.js';

// Real messages through the BUILT daemon (bin/gateway, a child process; build first) and real
// Baileys against the protocol double: the double's contacts have their own Signal identities,
// decrypt what the gateway sends and write back; receipts, media (both ways, real WhatsApp media
// encryption, HTTPS media host), LID senders and groups. One paired gateway for the file; each test
// uses its own contacts.

let gw: GatewayOnDouble;

test.before(async () => {
  // The double claims no pre-keys for the new device, so Baileys uploads its 812 one-time pre-keys
  // at login, as with WhatsApp; contacts that start a session use them.
  // media.maxBytes 1 MiB: the largest file sent or received (a test sends a bigger one in).
  gw = await startGatewayOnDouble({ double: { assumedPreKeys: 0 }, config: { media: { maxBytes: 1024 * 1024 } } });
});

test.after.always(async () => {
  await gw?.close();
});

test.afterEach.always((t) => {
  // Nothing the double could not decrypt, and no nack from Baileys.
  if (gw.double.errors.length > 0) t.log(gw.double.errors);
  // A failure on a loaded CI machine is diagnosed from the daemon's own log.
  if (!t.passed) t.log(gw.output().slice(-6000));
});

test.serial('a text sent with POST /send is decrypted by the contact; delivery and read receipts become message.status webhooks and GET shows read', async (t) => {
  const alice = await gw.double.contact('+15550000102', { name: 'Alice' });
  const res = await gw.api('POST', '/send', { json: { phone: alice.phone, message: 'Hello Alice, this is the gateway' } });
  t.is(res.status, 200, JSON.stringify(res.body));
  const messageId = res.body.messageId as string;

  const m = await alice.nextMessage();
  t.is(m.id, messageId);
  t.is(m.text, 'Hello Alice, this is the gateway');
  t.is(m.chat, alice.jid);
  t.is(m.encType, 'pkmsg', 'a first message starts the Signal session');
  t.is(m.sender.jid, gw.double.lastDevice()!.jid);

  const sent = await gw.waitEvent('message.status', (e) => e.data.messageId === messageId && e.data.status === 'sent');
  t.is(sent.data.chatId, alice.jid);

  alice.receipt(m, 'delivery');
  const delivered = await gw.waitEvent('message.status', (e) => e.data.messageId === messageId && e.data.status === 'delivered');
  t.is(delivered.data.chatId, alice.jid);
  t.is(delivered.instanceId, gw.id);
  alice.receipt(m, 'read');
  await gw.waitEvent('message.status', (e) => e.data.messageId === messageId && e.data.status === 'read');

  const got = await gw.api('GET', `/messages/${messageId}`);
  t.is(got.status, 200);
  t.like(got.body, { messageId, chatId: alice.jid, fromMe: true, type: 'text', text: 'Hello Alice, this is the gateway', status: 'read' });
  t.deepEqual(
    gw.events('message.status').filter((e) => e.data.messageId === messageId).map((e) => e.data.status),
    ['sent', 'delivered', 'read'],
    'each status once, in order',
  );
  t.deepEqual(gw.double.errors, []);
});

test.serial("the contact's reply (quoting) arrives as a signed message.received with the right chatId; POST /read sends the contact a read receipt", async (t) => {
  const bea = await gw.double.contact('+15550000103', { name: 'Bea' });
  const out = await gw.api('POST', '/send', { json: { phone: bea.phone, message: 'Question?' } });
  t.is(out.status, 200);
  const question = await bea.nextMessage();

  const replyId = await bea.sendText(gw.double.accountJid(), 'Answer!', { quoted: question });
  const ev = await gw.waitEvent('message.received', (e) => e.data.messageId === replyId);
  t.like(ev.data, {
    messageId: replyId,
    chatId: bea.jid,
    isGroup: false,
    from: bea.phone,
    fromName: 'Bea',
    type: 'text',
    text: 'Answer!',
    quoted: { messageId: question.id },
  });
  // Baileys answered the message with a delivery receipt, which is also what settles it on the server.
  const delivery = await bea.nextReceipt();
  t.deepEqual(delivery.ids, [replyId]);
  t.is(delivery.type, 'inactive');
  await waitFor(() => gw.double.pending().length === 0, 10_000, 'nothing left unacknowledged');
  // The reply used the session the gateway's pkmsg opened: the next message is a plain `msg`.
  await gw.api('POST', '/send', { json: { phone: bea.phone, message: 'Thanks' } });
  t.is((await bea.nextMessage()).encType, 'msg');

  // Replies quote with the right author: the contact's message, then the gateway's own.
  const toTheirs = await gw.api('POST', '/send', { json: { phone: bea.phone, message: 'about your answer', replyTo: replyId } });
  t.is(toTheirs.status, 200, JSON.stringify(toTheirs.body));
  const q1 = (await bea.nextMessage()).message.extendedTextMessage?.contextInfo;
  t.like(q1, { stanzaId: replyId, participant: bea.jid });
  t.is(q1?.quotedMessage?.conversation ?? q1?.quotedMessage?.extendedTextMessage?.text, 'Answer!', 'the quoted text is the real one');
  const toOurs = await gw.api('POST', '/send', { json: { phone: bea.phone, message: 'and my question', replyTo: question.id } });
  t.is(toOurs.status, 200);
  const q2 = (await bea.nextMessage()).message.extendedTextMessage?.contextInfo;
  t.like(q2, { stanzaId: question.id, participant: gw.double.accountJid() });

  const read = await gw.api('POST', '/read', { json: { chatId: bea.jid } });
  t.is(read.status, 200, JSON.stringify(read.body));
  t.is(read.body.read, 1);
  const receipt = await bea.nextReceipt();
  t.is(receipt.type, 'read');
  t.deepEqual(receipt.ids, [replyId]);
  t.is((await gw.api('GET', `/messages/${replyId}`)).body.status, 'read');
  t.deepEqual(gw.double.errors, []);
});

test.serial('an image both ways: the contact decrypts what /send-media uploaded, and GET …/media serves what the contact sent, byte for byte', async (t) => {
  const cleo = await gw.double.contact('+15550000104', { name: 'Cleo' });
  const outBytes = randomPng(48);
  const form = new FormData();
  form.set('phone', cleo.phone);
  form.set('caption', 'a picture for you');
  form.set('file', new Blob([new Uint8Array(outBytes)], { type: 'image/png' }), 'picture.png');
  const res = await gw.api('POST', '/send-media', { body: form });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(res.body.mediaType, 'image');
  const m = await cleo.nextMessage();
  t.is(m.id, res.body.messageId);
  t.is(m.type, 'media');
  t.is(m.message.imageMessage?.mimetype, 'image/png');
  t.is(m.text, 'a picture for you');
  t.true(cleo.download(m).equals(outBytes), 'the contact decrypted exactly the bytes sent (MAC and hashes checked)');
  t.is(gw.double.media.uploads().length, 1, 'uploaded to the media host over HTTPS');

  const inBytes = randomPng(40);
  const inId = await cleo.sendImage(gw.double.accountJid(), inBytes, { caption: 'one for you' });
  const ev = await gw.waitEvent('message.received', (e) => e.data.messageId === inId);
  t.like(ev.data, { chatId: cleo.jid, type: 'image', caption: 'one for you', media: { mimetype: 'image/png', size: inBytes.length } });
  t.is(ev.data.media.url, `/api/${gw.id}/messages/${inId}/media`);
  const media = await fetch(`${gw.daemon.url}${ev.data.media.url as string}`, { headers: { 'x-api-key': gw.key } });
  t.is(media.status, 200);
  t.is(media.headers.get('content-type'), 'image/png');
  t.true(Buffer.from(await media.arrayBuffer()).equals(inBytes), 'the gateway downloaded and decrypted exactly the bytes the contact sent');
  t.true(gw.double.media.requests.some((r) => r.method === 'GET' && r.status === 200), 'downloaded from the media host');
  t.deepEqual(gw.double.errors, []);
});

test.serial('a received file over media.maxBytes is announced with its size and url null, and never downloaded', async (t) => {
  // Rule (issue 14, inbound media "stored bounded"): the size WhatsApp announces is checked before
  // anything is fetched, so a large document never sits whole in the daemon's memory.
  const dora = await gw.double.contact('+15550000109', { name: 'Dora' });
  const gets = () => gw.double.media.requests.filter((r) => r.method === 'GET').length;
  const before = gets();
  const big = randomBytes(1536 * 1024);
  const id = await dora.sendMedia(gw.double.accountJid(), big, 'document', { mimetype: 'application/pdf', fileName: 'big.pdf' });
  const ev = await gw.waitEvent('message.received', (e) => e.data.messageId === id);
  t.like(ev.data, { type: 'document', media: { mimetype: 'application/pdf', size: big.length, fileName: 'big.pdf', url: null } });
  t.is(gets(), before, 'nothing was downloaded');
  t.is((await gw.api('GET', `/messages/${id}/media`)).status, 404);
  t.deepEqual(gw.double.errors, []);
});

test.serial('LID senders: with the mapping the gateway reports the phone chat; without it the LID chat, and an answer through that chatId reaches the contact', async (t) => {
  const dana = await gw.double.contact('+15550000105', { name: 'Dana', addressing: 'lid' });
  const device = gw.double.lastDevice()!;
  const used = device.usedPreKeys.length;
  const danaId = await dana.sendText(gw.double.accountJid(), 'from a LID, with my number');
  const d = await gw.waitEvent('message.received', (e) => e.data.messageId === danaId);
  t.like(d.data, { chatId: dana.jid, from: dana.phone, sender: dana.lid, text: 'from a LID, with my number' });
  t.is(device.usedPreKeys.length, used + 1, "Dana's first message started its session on one of the pre-keys the gateway uploaded");
  t.true(device.preKeys.size + device.usedPreKeys.length >= 812);
  const publics = [...device.preKeys.values()];
  t.true(publics.every((k) => Buffer.from(k, 'latin1').length === 32));
  t.is(new Set(publics).size, publics.length, 'every uploaded pre-key is its own (key pairs are made ahead, each handed out once)');
  const answerDana = await gw.api('POST', '/send', { json: { to: d.data.chatId as string, message: 'answer to Dana' } });
  t.is(answerDana.status, 200);
  const toDana = await dana.nextMessage();
  t.is(toDana.text, 'answer to Dana');

  const eli = await gw.double.contact('+15550000106', { name: 'Eli', addressing: 'lid', alt: false });
  const eliId = await eli.sendText(gw.double.accountJid(), 'from a LID, number hidden');
  const e = await gw.waitEvent('message.received', (x) => x.data.messageId === eliId);
  t.like(e.data, { chatId: eli.lid, from: null, sender: eli.lid, fromName: 'Eli', text: 'from a LID, number hidden' });
  const answer = await gw.api('POST', '/send', { json: { to: e.data.chatId as string, message: 'answer to a LID' } });
  t.is(answer.status, 200, JSON.stringify(answer.body));
  const toEli = await eli.nextMessage();
  t.is(toEli.id, answer.body.messageId);
  t.is(toEli.text, 'answer to a LID');
  t.is(toEli.chat, eli.lid, 'addressed to the LID: the gateway never learnt the number');
  eli.receipt(toEli, 'read');
  await gw.waitEvent('message.status', (x) => x.data.messageId === toEli.id && x.data.status === 'read');
  t.deepEqual(gw.double.errors, []);
});

test.serial('a group: listed, described, a participant writes in (sender key), the gateway writes out (skmsg) and a read receipt moves it to read', async (t) => {
  const fay = await gw.double.contact('+15550000107', { name: 'Fay' });
  const gus = await gw.double.contact('+15550000108', { name: 'Gus', addressing: 'lid' });
  const group = gw.double.group('Double team', [fay, gus], { description: 'testing groups', admins: [fay] });

  const list = await gw.api('GET', '/groups');
  t.is(list.status, 200, JSON.stringify(list.body));
  t.deepEqual(list.body.groups, [{ chatId: group.jid, subject: 'Double team', size: 3 }]);
  const info = await gw.api('GET', `/groups/${group.jid}`);
  t.is(info.status, 200, JSON.stringify(info.body));
  t.like(info.body, { chatId: group.jid, subject: 'Double team', description: 'testing groups' });
  t.deepEqual(
    (info.body.participants as Array<{ jid: string; phone?: string; admin: boolean }>).map((p) => [p.jid, p.phone, p.admin]).sort(),
    [
      [fay.lid, fay.phone, true],
      [gus.lid, gus.phone, false],
      [gw.double.accountLid(), `+${gw.double.accountJid().split('@')[0]}`, true],
    ].sort(),
  );

  const inId = await fay.sendText(group.jid, 'hello team');
  const ev = await gw.waitEvent('message.received', (e) => e.data.messageId === inId);
  t.like(ev.data, { chatId: group.jid, isGroup: true, from: fay.phone, sender: fay.lid, text: 'hello team' });

  const out = await gw.api('POST', '/send', { json: { to: group.jid, message: 'hello from the gateway', replyTo: inId } });
  t.is(out.status, 200, JSON.stringify(out.body));
  const [forFay, forGus] = await Promise.all([fay.nextMessage(), gus.nextMessage()]);
  for (const m of [forFay, forGus]) {
    t.is(m.id, out.body.messageId);
    t.is(m.chat, group.jid);
    t.is(m.text, 'hello from the gateway');
    t.is(m.encType, 'skmsg');
    // The quote names Fay as its author, as members' apps need to find the quoted message.
    t.like(m.message.extendedTextMessage?.contextInfo, { stanzaId: inId, participant: fay.lid });
  }
  // Reacting to Fay's message and marking the group read name her as its author.
  const react = await gw.api('POST', '/react', { json: { chatId: group.jid, messageId: inId, emoji: '🎉' } });
  t.is(react.status, 200, JSON.stringify(react.body));
  const [rFay, rGus] = await Promise.all([fay.nextMessage(), gus.nextMessage()]);
  for (const r of [rFay, rGus]) t.like(r.message.reactionMessage, { text: '🎉', key: { id: inId, fromMe: false, participant: fay.lid } });
  const read = await gw.api('POST', '/read', { json: { chatId: group.jid } });
  t.is(read.status, 200, JSON.stringify(read.body));
  // (Fay's first receipt from the gateway is the delivery one, `inactive`, for her message.)
  const readReceipt = await waitFor(() => fay.receiptsFromGateway.find((r) => r.type === 'read'), 10_000, 'the read receipt');
  t.like(readReceipt, { ids: [inId], to: group.jid, participant: fay.lid });

  gus.receipt(forGus, 'delivery');
  await gw.waitEvent('message.status', (e) => e.data.messageId === forGus.id && e.data.status === 'delivered');
  fay.receipt(forFay, 'read');
  await gw.waitEvent('message.status', (e) => e.data.messageId === forFay.id && e.data.status === 'read');
  t.is((await gw.api('GET', `/messages/${forFay.id}`)).body.status, 'read');
  t.deepEqual(gw.double.errors, []);
});

test.serial('mentions both ways in a group: the gateway mentions by phone, a member mentions the account', async (t) => {
  // Contract part 2: `mentions` (E.164 or JIDs) on /send; `mentions` on message.received.
  const hal = await gw.double.contact('+15550000110', { name: 'Hal' });
  const ivy = await gw.double.contact('+15550000111', { name: 'Ivy' });
  const group = gw.double.group('Mentions', [hal, ivy]);
  const out = await gw.api('POST', '/send', { json: { to: group.jid, message: '@15550000110 and @Ivy, look', mentions: [hal.phone, ivy.jid] } });
  t.is(out.status, 200, JSON.stringify(out.body));
  const [forHal] = await Promise.all([hal.nextMessage(), ivy.nextMessage()]);
  t.deepEqual(forHal.message.extendedTextMessage?.contextInfo?.mentionedJid, [hal.jid, ivy.jid]);
  const stored = await gw.api('GET', `/messages/${out.body.messageId as string}`);
  t.deepEqual(stored.body.mentions, [hal.jid, ivy.jid]);

  const inId = await hal.send(group.jid, { extendedTextMessage: { text: '@gateway hello', contextInfo: { mentionedJid: [gw.double.accountJid()] } } }, { type: 'text' });
  const ev = await gw.waitEvent('message.received', (e) => e.data.messageId === inId);
  t.like(ev.data, { chatId: group.jid, text: '@gateway hello', mentions: [gw.double.accountJid()] });
  t.deepEqual(gw.double.errors, []);
});

test.serial('history through real Baileys: GET /chats lists the chat newest first with its unread count, and its messages go both ways, newest first', async (t) => {
  // Contract part 2 "Reading": one store serves the lifecycle and the conversation history.
  const jay = await gw.double.contact('+15550000112', { name: 'Jay' });
  const out = await gw.api('POST', '/send', { json: { phone: jay.phone, message: 'first, from us' } });
  t.is(out.status, 200);
  await jay.nextMessage();
  const inId = await jay.sendText(gw.double.accountJid(), 'then Jay');
  await gw.waitEvent('message.received', (e) => e.data.messageId === inId);
  const chats = await gw.api('GET', '/chats');
  t.is(chats.status, 200, JSON.stringify(chats.body));
  const first = (chats.body.chats as Array<Record<string, unknown>>)[0];
  t.like(first, { chatId: jay.jid, isGroup: false, unread: 1, handover: false });
  const msgs = await gw.api('GET', `/chats/${jay.jid}/messages?limit=10`);
  t.is(msgs.status, 200, JSON.stringify(msgs.body));
  t.deepEqual(
    (msgs.body.messages as Array<{ messageId: string; fromMe: boolean; text: string }>).map((m) => [m.messageId, m.fromMe, m.text]),
    [
      [inId, false, 'then Jay'],
      [out.body.messageId, true, 'first, from us'],
    ],
  );
});

test.serial('actions reach the contact: react, edit, delete, typing; contacts/check asks usync', async (t) => {
  const hal = await gw.double.contact('+15550000109', { name: 'Hal' });
  const sent = await gw.api('POST', '/send', { json: { phone: hal.phone, message: 'typo' } });
  const id = sent.body.messageId as string;
  await hal.nextMessage();
  const theirs = await hal.sendText(gw.double.accountJid(), 'nice');
  await gw.waitEvent('message.received', (e) => e.data.messageId === theirs);

  const react = await gw.api('POST', '/react', { json: { chatId: hal.jid, messageId: theirs, emoji: '👍' } });
  t.is(react.status, 200, JSON.stringify(react.body));
  const r = await hal.nextMessage();
  t.is(r.message.reactionMessage?.text, '👍');
  t.is(r.message.reactionMessage?.key?.id, theirs);
  t.false(r.message.reactionMessage?.key?.fromMe, 'a reaction to the contact’s own message');

  const edit = await gw.api('POST', `/messages/${id}/edit`, { json: { chatId: hal.jid, message: 'fixed' } });
  t.is(edit.status, 200, JSON.stringify(edit.body));
  const e = await hal.nextMessage();
  const edited = e.message.protocolMessage ?? e.message.editedMessage?.message?.protocolMessage;
  t.is(edited?.type, proto.Message.ProtocolMessage.Type.MESSAGE_EDIT);
  t.is(edited?.key?.id, id);
  t.is(edited?.editedMessage?.conversation ?? edited?.editedMessage?.extendedTextMessage?.text, 'fixed');

  const del = await gw.api('DELETE', `/messages/${id}?chatId=${encodeURIComponent(hal.jid)}`);
  t.is(del.status, 200, JSON.stringify(del.body));
  const d = await hal.nextMessage();
  t.is(d.message.protocolMessage?.type, proto.Message.ProtocolMessage.Type.REVOKE);
  t.is(d.message.protocolMessage?.key?.id, id);

  const typing = await gw.api('POST', '/presence', { json: { chatId: hal.jid, state: 'typing' } });
  t.is(typing.status, 200, JSON.stringify(typing.body));
  await waitFor(() => hal.chatStates.some((s) => s.state === 'composing'), 10_000, 'typing… at the contact');

  const check = await gw.api('POST', '/contacts/check', { json: { phones: [hal.phone, '+15559999999'] } });
  t.is(check.status, 200, JSON.stringify(check.body));
  t.deepEqual(check.body.results, [
    { phone: hal.phone, exists: true, chatId: hal.jid },
    { phone: '+15559999999', exists: false, chatId: null },
  ]);
  t.deepEqual(gw.double.errors, []);
});

test.serial("what the contact does to messages reaches the integrator: its reaction, its edit and its delete become webhooks and show on GET", async (t) => {
  const ivo = await gw.double.contact('+15550000110', { name: 'Ivo' });
  const account = gw.double.accountJid();
  const out = await gw.api('POST', '/send', { json: { phone: ivo.phone, message: 'rate this' } });
  const m = await ivo.nextMessage();
  t.is(m.id, out.body.messageId);

  await ivo.react(account, { id: m.id, fromMe: false }, '❤️');
  const reaction = await gw.waitEvent('message.reaction', (e) => e.data.messageId === m.id);
  t.like(reaction.data, { chatId: ivo.jid, from: ivo.phone, emoji: '❤️' });
  t.deepEqual((await gw.api('GET', `/messages/${m.id}`)).body.reactions, [{ sender: reaction.data.sender, emoji: '❤️' }]);

  const own = await ivo.sendText(account, 'teh typo');
  await gw.waitEvent('message.received', (e) => e.data.messageId === own);
  await ivo.edit(account, own, 'the typo, fixed');
  const edited = await gw.waitEvent('message.edited', (e) => e.data.messageId === own);
  t.like(edited.data, { chatId: ivo.jid, from: ivo.phone, text: 'the typo, fixed' });
  await ivo.revoke(account, own);
  await gw.waitEvent('message.deleted', (e) => e.data.messageId === own);
  const stored = await gw.api('GET', `/messages/${own}`);
  t.like(stored.body, { messageId: own, edited: true, deleted: true });
  t.deepEqual(gw.double.errors, []);
});

test.serial('a location and a contact card from a contact arrive typed', async (t) => {
  const jay = await gw.double.contact('+15550000111', { name: 'Jay' });
  const account = gw.double.accountJid();
  const loc = await jay.send(account, { locationMessage: { degreesLatitude: 52.52, degreesLongitude: 13.405, name: 'Cafe', address: 'Main street 1' } }, { type: 'media', mediatype: 'location' });
  const l = await gw.waitEvent('message.received', (e) => e.data.messageId === loc);
  t.like(l.data, { type: 'location', location: { latitude: 52.52, longitude: 13.405, name: 'Cafe', address: 'Main street 1' } });
  const vcard = 'BEGIN:VCARD\nVERSION:3.0\nFN:Support\nTEL;type=CELL;waid=15557654321:+15557654321\nEND:VCARD';
  const card = await jay.send(account, { contactMessage: { displayName: 'Support', vcard } }, { type: 'media', mediatype: 'vcard' });
  const c = await gw.waitEvent('message.received', (e) => e.data.messageId === card);
  t.like(c.data, { type: 'contact', contacts: [{ name: 'Support', phone: '+15557654321' }] });
  t.deepEqual(gw.double.errors, []);
});

test.serial('every other send kind reaches the contact as WhatsApp content: location, contact cards, poll', async (t) => {
  const kim = await gw.double.contact('+15550000112', { name: 'Kim' });
  const loc = await gw.api('POST', '/send-location', { json: { phone: kim.phone, latitude: 48.8584, longitude: 2.2945, name: 'Tower' } });
  t.is(loc.status, 200, JSON.stringify(loc.body));
  t.like((await kim.nextMessage()).message.locationMessage, { degreesLatitude: 48.8584, degreesLongitude: 2.2945, name: 'Tower' });

  const card = await gw.api('POST', '/send-contact', { json: { phone: kim.phone, contacts: [{ name: 'Support', phone: '+15557654321' }] } });
  t.is(card.status, 200, JSON.stringify(card.body));
  const c = await kim.nextMessage();
  const cards = c.message.contactMessage ? [c.message.contactMessage] : (c.message.contactsArrayMessage?.contacts ?? []);
  t.is(cards[0]?.displayName, 'Support');
  t.regex(cards[0]?.vcard ?? '', /15557654321/);

  const poll = await gw.api('POST', '/send-poll', { json: { phone: kim.phone, question: 'Lunch?', options: ['Pizza', 'Sushi'] } });
  t.is(poll.status, 200, JSON.stringify(poll.body));
  const p = await kim.nextMessage();
  const creation = p.message.pollCreationMessage ?? p.message.pollCreationMessageV2 ?? p.message.pollCreationMessageV3;
  t.is(creation?.name, 'Lunch?');
  t.deepEqual(creation?.options?.map((o) => o.optionName), ['Pizza', 'Sushi']);
  t.is(creation?.selectableOptionsCount, 1);
  t.deepEqual(gw.double.errors, []);
});

test.serial('a message the server refuses (ack with an error) becomes message.status failed', async (t) => {
  const lea = await gw.double.contact('+15550000113', { name: 'Lea' });
  gw.double.rejectMessages('479');
  const res = await gw.api('POST', '/send', { json: { phone: lea.phone, message: 'refused' } });
  t.is(res.status, 200, 'Baileys resolves the send once the stanza is written');
  const id = res.body.messageId as string;
  const failed = await gw.waitEvent('message.status', (e) => e.data.messageId === id && e.data.status === 'failed');
  t.regex(failed.data.error as string, /479/);
  t.like((await gw.api('GET', `/messages/${id}`)).body, { status: 'failed', error: failed.data.error });
  t.is(lea.messages.length, 0, 'never delivered');
  t.deepEqual(gw.double.errors, []);
});
