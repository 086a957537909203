import test from 'ava';
import { proto, type WAMessage } from '@whiskeysockets/baileys';
import { mapUpsert, SeenMessages, type LidResolver } from '../../src/connection/baileys/mapping.js';
import { incoming } from './baileys-fake-socket.js';

const NOW = Date.UTC(2026, 0, 1);
const opts = { now: () => NOW };

async function mapped(msg: WAMessage, resolver?: LidResolver) {
  const result = await mapUpsert(msg, { ...opts, resolver });
  if (!result.ok) throw new Error(`skipped: ${result.skip}`);
  if (result.kind !== 'message') throw new Error('an update, not a message');
  return result.message;
}

async function skip(msg: WAMessage): Promise<string> {
  const result = await mapUpsert(msg, opts);
  return result.ok ? 'mapped' : result.skip;
}

test('a plain text DM', async (t) => {
  t.deepEqual(await mapped(incoming('A1')), {
    messageId: 'A1',
    sender: '15551234567@s.whatsapp.net',
    from: '+15551234567',
    fromName: 'Alice',
    chatId: '15551234567@s.whatsapp.net',
    isGroup: false,
    type: 'text',
    text: 'hello A1',
    timestamp: '2026-01-01T00:00:00.000Z',
  });
});

test('extended text, and a Long timestamp as protobuf decodes it', async (t) => {
  const wire = proto.WebMessageInfo.encode({
    key: { remoteJid: '15551234567@s.whatsapp.net', fromMe: false, id: 'A2' },
    message: { extendedTextMessage: { text: 'see https://x.y' } },
    messageTimestamp: 1_767_225_601,
  }).finish();
  const decoded = proto.WebMessageInfo.decode(wire);
  t.is(typeof decoded.messageTimestamp, 'object', 'protobufjs gives uint64 as a Long');
  const m = await mapped({ ...decoded, key: decoded.key ?? {} });
  t.is(m.type, 'text');
  t.is(m.text, 'see https://x.y');
  t.is(m.timestamp, '2026-01-01T00:00:01.000Z');
});

test('no timestamp falls back to now', async (t) => {
  t.is((await mapped(incoming('A3', { messageTimestamp: null }))).timestamp, new Date(NOW).toISOString());
});

test('media types with captions', async (t) => {
  t.like(await mapped(incoming('M1', { message: { imageMessage: { caption: 'cat', mimetype: 'image/jpeg' } } })), { type: 'image', caption: 'cat' });
  t.like(await mapped(incoming('M2', { message: { videoMessage: { caption: 'clip' } } })), { type: 'video', caption: 'clip' });
  const audio = await mapped(incoming('M3', { message: { audioMessage: { ptt: true, mimetype: 'audio/ogg' } } }));
  t.is(audio.type, 'audio');
  t.is(audio.caption, undefined);
  t.like(await mapped(incoming('M4', { message: { documentMessage: { fileName: 'a.pdf', caption: 'invoice' } } })), {
    type: 'document',
    caption: 'invoice',
  });
  // Documents with a caption arrive wrapped; so do disappearing and view-once messages.
  t.like(
    await mapped(incoming('M5', { message: { documentWithCaptionMessage: { message: { documentMessage: { caption: 'wrapped' } } } } })),
    { type: 'document', caption: 'wrapped' },
  );
  t.like(await mapped(incoming('M6', { message: { ephemeralMessage: { message: { conversation: 'psst' } } } })), { type: 'text', text: 'psst' });
  t.like(await mapped(incoming('M7', { message: { viewOnceMessageV2: { message: { imageMessage: {} } } } })), { type: 'image' });
});

test('stickers, locations and contact cards have their own types; anything else is "other"', async (t) => {
  t.is((await mapped(incoming('O1', { message: { stickerMessage: {} } }))).type, 'sticker');
  const loc = await mapped(incoming('O2', { message: { locationMessage: { degreesLatitude: 1, degreesLongitude: 2 } } }));
  t.is(loc.type, 'location');
  t.like(loc.location, { latitude: 1, longitude: 2 });
  const card = await mapped(incoming('O3', { message: { contactMessage: { displayName: 'Bob', vcard: 'BEGIN:VCARD\nFN:Bob\nTEL;waid=15557654321:+1 555 765 4321\nEND:VCARD' } } }));
  t.is(card.type, 'contact');
  t.is(card.contacts?.[0]?.name, 'Bob');
  t.is((await mapped(incoming('O4', { message: { groupInviteMessage: { groupName: 'x' } } }))).type, 'other');
});

test('skips own, status, newsletter, broadcast, protocol, stub and empty messages', async (t) => {
  t.is(await skip(incoming('S1', { key: { remoteJid: '15551234567@s.whatsapp.net', fromMe: true, id: 'S1' } })), 'from-me');
  t.is(await skip(incoming('S2', { from: 'status@broadcast', key: { remoteJid: 'status@broadcast', participant: '1555@s.whatsapp.net', id: 'S2' } })), 'status');
  t.is(await skip(incoming('S3', { key: { remoteJid: '1203630@newsletter', id: 'S3' } })), 'newsletter');
  t.is(await skip(incoming('S4', { key: { remoteJid: '12345@broadcast', id: 'S4' } })), 'broadcast');
  t.is(await skip(incoming('S5', { message: { protocolMessage: { type: proto.Message.ProtocolMessage.Type.REVOKE } } })), 'protocol');
  t.is(await skip(incoming('S6', { message: null, messageStubType: proto.WebMessageInfo.StubType.CIPHERTEXT })), 'stub');
  t.is(await skip(incoming('S7', { message: null })), 'no-message');
  t.is(await skip(incoming('S8', { message: { senderKeyDistributionMessage: { groupId: 'g' } } })), 'no-content');
  // An edit arrives as a protocol message inside editedMessage.
  t.is(await skip(incoming('S9', { message: { editedMessage: { message: { protocolMessage: { type: 14 } } } } })), 'protocol');
  t.is(await skip({ key: { remoteJid: '1@s.whatsapp.net' }, message: { conversation: 'x' } }), 'no-id');
});

test('group messages: sender is the participant, chat is the group', async (t) => {
  const m = await mapped(
    incoming('G1', { key: { remoteJid: '120363000000@g.us', participant: '15557654321@s.whatsapp.net', id: 'G1' } }),
  );
  t.like(m, { from: '+15557654321', chatId: '120363000000@g.us', isGroup: true });
});

test('LID senders resolve through the *Alt fields', async (t) => {
  const dm = await mapped(incoming('L1', { key: { remoteJid: '99887766@lid', remoteJidAlt: '15551112222@s.whatsapp.net', id: 'L1' } }));
  t.like(dm, { from: '+15551112222', chatId: '15551112222@s.whatsapp.net' });
  const group = await mapped(
    incoming('L2', { key: { remoteJid: '1203@g.us', participant: '5544@lid', participantAlt: '15553334444@s.whatsapp.net', id: 'L2' } }),
  );
  t.like(group, { from: '+15553334444', chatId: '1203@g.us' });
});

test('LID senders resolve through the LID mapping store (device-suffixed answer)', async (t) => {
  const resolver: LidResolver = { getPNForLID: async (lid) => (lid === '99887766@lid' ? '15559990000:0@s.whatsapp.net' : null) };
  const m = await mapped(incoming('L3', { key: { remoteJid: '99887766@lid', id: 'L3' } }), resolver);
  t.like(m, { from: '+15559990000', chatId: '15559990000@s.whatsapp.net' });
});

test('an unresolvable LID is reported as the LID, not dropped', async (t) => {
  const failing: LidResolver = {
    getPNForLID: async () => {
      throw new Error('store closed');
    },
  };
  for (const resolver of [undefined, failing, { getPNForLID: async () => null }]) {
    const m = await mapped(incoming('L4', { key: { remoteJid: '11223344@lid', id: 'L4' } }), resolver);
    // DESIGN.md addressing: `from` is null when only a LID is known; `sender` and `chatId` carry it.
    t.like(m, { from: null, sender: '11223344@lid', chatId: '11223344@lid', type: 'text' });
  }
});

test('SeenMessages: first claim wins, release lets a copy through, capacity bounds memory', (t) => {
  const seen = new SeenMessages(3);
  t.true(seen.claim('a'));
  t.false(seen.claim('a'));
  seen.release('a');
  t.true(seen.claim('a'));
  seen.claim('b');
  seen.claim('c');
  seen.claim('d');
  t.true(seen.claim('a'), 'the oldest id was forgotten');
});
