/**
 * Issue 25 (the inbox: search by name, number and text): the message port's search on every
 * engine. It finds text, captions and senders' names case-insensitively, newest first, up to the
 * limit, never a deleted message, and treats LIKE's special characters and quotes as text.
 */
import type { InboundMessage } from '../../src/schemas/events.js';
import { engineTest } from './engines.js';
import { outgoing } from './scenarios.js';

const ID = 'inst_search00001';
const inbound = (messageId: string, chatId: string, at: number, extra: Partial<InboundMessage>): InboundMessage => ({
  messageId,
  chatId,
  isGroup: false,
  sender: chatId,
  from: `+${chatId.split('@')[0]}`,
  type: 'text',
  timestamp: new Date(at).toISOString(),
  ...extra,
});

engineTest('messages: search finds text, captions and names, newest first, never a deleted one', async (t, at) => {
  const s = await at.open();
  const now = Date.now();
  await s.messages.recordInbound(ID, inbound('S1', '15550000001@s.whatsapp.net', now, { text: 'Where is my ORDER 42?', fromName: 'Ann' }), undefined);
  await s.messages.recordInbound(ID, inbound('S2', '15550000002@s.whatsapp.net', now + 1, { type: 'image', caption: 'the order slip', fromName: 'Bob' }), { mimetype: 'image/jpeg', size: 1 });
  await s.messages.recordOutgoing(ID, outgoing('S3', '15550000001@s.whatsapp.net', now + 2, 'Your order ships today (100% sure) "really"'), true);
  await s.messages.recordInbound(ID, inbound('S4', '15550000003@s.whatsapp.net', now + 3, { text: 'cancel my order', fromName: 'Cy' }), undefined);
  t.true(await s.messages.deleted(ID, 'S4'));
  t.deepEqual((await s.messages.search(ID, 'order', 10)).map((m) => m.messageId), ['S3', 'S2', 'S1']);
  t.deepEqual((await s.messages.search(ID, 'order', 2)).map((m) => m.messageId), ['S3', 'S2']);
  t.deepEqual((await s.messages.search(ID, 'bob', 10)).map((m) => m.messageId), ['S2'], 'by the sender name');
  t.deepEqual((await s.messages.search(ID, '100%', 10)).map((m) => m.messageId), ['S3'], '% is text');
  t.deepEqual((await s.messages.search(ID, '"really"', 10)).map((m) => m.messageId), ['S3'], 'quotes are text');
  t.deepEqual(await s.messages.search(ID, '_', 10), [], '_ is text');
  t.deepEqual(await s.messages.search(ID, 'cancel', 10), [], 'a deleted message is not found');
});
