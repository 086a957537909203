/**
 * Guards issue 24 items 2 and 3 on sandbox instances (a real daemon, real HTTP, webhooks to a real
 * receiver): message.sent for what the account sends from its phone (history, not repeated as
 * received), media.kind of inbound voice notes and stickers; contacts with the LID <-> phone lookup,
 * block list, profile and picture, chat settings, labels (409 NOT_BUSINESS on a personal account,
 * label.updated events), status posts (one credit, audience); `phone` next to a phone chat in
 * message.status and GET /messages/{id}. Every answer matches /openapi.json.
 */
import test from 'ava';
import { randomPng } from '../protocol-double/fixtures.js';
import { STICKER_WEBP, VOICE_OGG } from '../fixtures/media/media.js';
import { startTestDaemon, waitFor, type ApiResponse, type TestDaemon } from '../helpers/daemon.js';
import { documentChecker } from '../helpers/document-check.js';
import { setWebhook, startReceiver, type Receiver } from '../helpers/receiver.js';

const ann = '+15551234567';
const annChat = '15551234567@s.whatsapp.net';

interface World {
  d: TestDaemon;
  receiver: Receiver;
  inst: { id: string; key: string };
  call(method: string, path: string, options?: { json?: unknown; body?: FormData }): Promise<ApiResponse>;
  events(type: string): Array<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any -- asserted field by field
}

async function world(t: { teardown(fn: () => Promise<void>): void }, credits?: number): Promise<World> {
  const receiver = await startReceiver();
  const d = await startTestDaemon();
  t.teardown(async () => {
    await d.close();
    await receiver.close();
  });
  const inst = await d.connectedSandbox(credits === undefined ? {} : { credits });
  await setWebhook(d, inst, receiver.url, { events: null });
  const check = await documentChecker(d);
  return {
    d,
    receiver,
    inst,
    async call(method, path, options = {}) {
      const res = await d.request(method, `/api/${inst.id}${path}`, { key: inst.key, ...options });
      const template = `/api/{id}${path
        .replace(/\/chats\/[^/]+/, '/chats/{chatId}')
        .replace(/\/messages\/[^/]+/, '/messages/{messageId}')
        .replace(/\/contacts\/(?!check)[^/]+(\/block)?$/, (_m, block: string | undefined) => (block ? '/contacts/{chatId}/block' : '/contacts/{chatIdOrPhone}'))}`;
      const mismatch = check(res, template, method);
      if (mismatch) throw new Error(mismatch);
      return res;
    },
    events: (type) => receiver.requests.filter((r) => r.json.type === type).map((r) => r.json.data as Record<string, unknown>),
  };
}

test('a message the account sends from its phone is message.sent (fromMe), enters history, and is not message.received', async (t) => {
  const w = await world(t);
  const res = await w.call('POST', '/sandbox/outbound', { json: { phone: ann, message: 'sent from my phone' } });
  t.is(res.status, 200, JSON.stringify(res.body));
  const ev = await waitFor(() => w.events('message.sent').find((e) => e.messageId === res.body.messageId), 5000, 'message.sent');
  t.like(ev, { chatId: annChat, fromMe: true, type: 'text', text: 'sent from my phone', isGroup: false });
  t.is(ev.from, '+10000000000', "the sandbox account's own phone");
  const kept = await w.call('GET', `/messages/${res.body.messageId}`);
  t.like(kept.body, { fromMe: true, chatId: annChat, phone: ann, status: 'sent', text: 'sent from my phone' });
  t.deepEqual(w.events('message.received'), []);
  // A send through the gateway is not repeated as message.sent; its status events carry the chat's phone.
  const own = await w.call('POST', '/send', { json: { phone: ann, message: 'through the gateway' } });
  t.like(await waitFor(() => w.events('message.status').find((e) => e.messageId === own.body.messageId), 5000, 'message.status'), { chatId: annChat, phone: ann, status: 'sent' });
  await w.call('POST', '/sandbox/outbound', { json: { phone: ann, message: 'second from the phone' } });
  await waitFor(() => w.events('message.sent').length === 2, 5000, 'the second message.sent');
  t.deepEqual(w.events('message.sent').map((e) => e.text), ['sent from my phone', 'second from the phone']);
});

test('inbound voice notes and stickers say so in media.kind; a phone-sent voice note too', async (t) => {
  const w = await world(t);
  const inbound = async (file: Buffer, type: string, as: string) => {
    const form = new FormData();
    form.set('from', ann);
    form.set('as', as);
    form.set('file', new Blob([new Uint8Array(file)], { type }), 'f');
    const res = await w.call('POST', '/sandbox/inbound', { body: form });
    t.is(res.status, 200, JSON.stringify(res.body));
    return res.body.messageId as string;
  };
  const voice = await inbound(VOICE_OGG, 'audio/ogg', 'voice');
  const sticker = await inbound(STICKER_WEBP, 'image/webp', 'sticker');
  const received = await waitFor(() => (w.events('message.received').length === 2 ? w.events('message.received') : null), 5000, 'two events');
  t.like(received.find((e) => e.messageId === voice)?.media, { kind: 'voice', mimetype: 'audio/ogg; codecs=opus' });
  t.like(received.find((e) => e.messageId === sticker)?.media, { kind: 'sticker', mimetype: 'image/webp' });
  const form = new FormData();
  form.set('to', annChat);
  form.set('as', 'voice');
  form.set('file', new Blob([new Uint8Array(VOICE_OGG)], { type: 'audio/ogg' }), 'v.ogg');
  const sent = await w.call('POST', '/sandbox/outbound', { body: form });
  const ev = await waitFor(() => w.events('message.sent').find((e) => e.messageId === sent.body.messageId), 5000, 'message.sent');
  t.like(ev, { type: 'audio', fromMe: true, media: { kind: 'voice' } });
});

test('contacts: the LID <-> phone lookup both ways, name, about and picture; block, unblock and the block list', async (t) => {
  const w = await world(t);
  // A number nobody told the sandbox about: it exists, no LID known.
  t.like((await w.call('GET', `/contacts/${encodeURIComponent(ann)}`)).body, { chatId: annChat, phone: ann, exists: true });
  await w.call('POST', '/sandbox/contact', { json: { phone: ann, lid: '200000051234567', name: 'Ann Silva', about: 'Available', pictureUrl: 'https://example.com/ann.jpg' } });
  const byPhone = await w.call('GET', `/contacts/${ann}`);
  t.deepEqual(byPhone.body, { success: true, instanceId: w.inst.id, chatId: annChat, phone: ann, lid: '200000051234567@lid', name: 'Ann Silva', about: 'Available', pictureUrl: 'https://example.com/ann.jpg', exists: true });
  const byLid = await w.call('GET', '/contacts/200000051234567@lid');
  t.like(byLid.body, { chatId: annChat, phone: ann, lid: '200000051234567@lid', name: 'Ann Silva' });
  // A LID only ever seen without its number: no phone.
  await w.call('POST', '/sandbox/inbound', { json: { lid: '200000000000077', message: 'hidden number' } });
  const hidden = await w.call('GET', '/contacts/200000000000077@lid');
  t.deepEqual(hidden.body, { success: true, instanceId: w.inst.id, chatId: '200000000000077@lid', lid: '200000000000077@lid', exists: true });
  // ... until a message gave both.
  await w.call('POST', '/sandbox/inbound', { json: { lid: '200000000000077', from: '+15550000077', message: 'now with the number' } });
  t.like((await w.call('GET', '/contacts/200000000000077@lid')).body, { phone: '+15550000077', chatId: '15550000077@s.whatsapp.net' });

  t.is((await w.call('GET', '/contacts/120363041234567890@g.us')).status, 400);
  t.is((await w.call('GET', '/contacts/+0123')).status, 400);

  const block = await w.call('POST', `/contacts/${annChat}/block`, { json: { blocked: true } });
  t.deepEqual(block.body, { success: true, instanceId: w.inst.id, chatId: annChat, phone: ann, blocked: true });
  await w.call('POST', '/contacts/200000000000077@lid/block', { json: { blocked: true } });
  t.deepEqual((await w.call('GET', '/blocklist')).body.blocked, [
    { chatId: annChat, phone: ann },
    { chatId: '15550000077@s.whatsapp.net', phone: '+15550000077' },
  ]);
  await w.call('POST', `/contacts/${ann}/block`, { json: { blocked: false } });
  t.deepEqual((await w.call('GET', '/blocklist')).body.blocked, [{ chatId: '15550000077@s.whatsapp.net', phone: '+15550000077' }]);
  t.is((await w.call('POST', `/contacts/${ann}/block`, { json: { blocked: 'yes' } })).status, 400);
  await w.call('POST', '/sandbox/disconnect');
  t.is((await w.call('GET', `/contacts/${ann}`)).status, 503);
});

test('profile: name and about change, the picture is set from a multipart image and removed', async (t) => {
  const w = await world(t);
  const before = await w.call('GET', '/profile');
  t.like(before.body, { name: 'Sandbox', about: '', business: false });
  t.is(before.body.pictureUrl, undefined);
  const changed = await w.call('PUT', '/profile', { json: { name: 'Acme Shop', about: 'Open 9 to 5' } });
  t.like(changed.body, { name: 'Acme Shop', about: 'Open 9 to 5', phone: before.body.phone, jid: before.body.jid });
  t.is((await w.call('PUT', '/profile', { json: {} })).body.error.code, 'MISSING_FIELD');
  t.is((await w.call('PUT', '/profile', { json: { name: 'x'.repeat(26) } })).status, 400);
  const form = new FormData();
  form.set('file', new Blob([new Uint8Array(randomPng(16))], { type: 'image/png' }), 'me.png');
  t.like((await w.call('PUT', '/profile/picture', { body: form })).body, { picture: true });
  t.truthy((await w.call('GET', '/profile')).body.pictureUrl);
  const notImage = new FormData();
  notImage.set('file', new Blob([Buffer.from('%PDF-1.4 x')], { type: 'image/png' }), 'me.png');
  t.is((await w.call('PUT', '/profile/picture', { body: notImage })).status, 415);
  t.like((await w.call('DELETE', '/profile/picture')).body, { picture: false });
  t.is((await w.call('GET', '/profile')).body.pictureUrl, undefined);
  const actions = (await w.call('GET', '/sandbox/actions')).body.actions as Array<{ action: string; text?: string }>;
  t.deepEqual(actions.map((a) => [a.action, a.text]), [
    ['profile', '{"name":"Acme Shop","about":"Open 9 to 5"}'],
    ['picture', 'set'],
    ['picture', 'removed'],
  ]);
});

test('chat settings: archive, pin, mute until a time and unmute, unread, delete (which takes the chat out of history too); bad input is 400', async (t) => {
  const w = await world(t);
  await w.call('POST', '/sandbox/inbound', { json: { from: ann, message: 'hello' } });
  await w.call('POST', '/send', { json: { phone: ann, message: 'hi' } });
  await w.call('POST', '/sandbox/inbound', { json: { from: '+15557654321', message: 'another chat' } });
  t.like((await w.call('POST', `/chats/${annChat}/archive`, { json: { archived: true } })).body, { chatId: annChat, phone: ann, archived: true });
  await w.call('POST', `/chats/${annChat}/pin`, { json: { pinned: true } });
  const muted = await w.call('POST', `/chats/${annChat}/mute`, { json: { until: '2030-01-01T00:00:00Z' } });
  t.is(muted.body.mutedUntil, '2030-01-01T00:00:00.000Z');
  t.is((await w.call('POST', `/chats/${annChat}/mute`, { json: { until: null } })).body.mutedUntil, null);
  await w.call('POST', '/chats/120363041234567890@g.us/unread');
  t.like((await w.call('DELETE', `/chats/${annChat}`)).body, { deleted: true, messagesRemoved: 2 });
  t.deepEqual(((await w.call('GET', '/chats')).body.chats as Array<{ chatId: string }>).map((c) => c.chatId), ['15557654321@s.whatsapp.net']);
  t.is((await w.call('GET', `/chats/${annChat}/messages`)).status, 404);
  const actions = (await w.call('GET', '/sandbox/actions')).body.actions as Array<{ action: string; chatId: string; text?: string }>;
  t.deepEqual(actions.filter((a) => a.action !== 'presence').map((a) => [a.action, a.chatId, a.text]), [
    ['archive', annChat, undefined],
    ['pin', annChat, undefined],
    ['mute', annChat, '2030-01-01T00:00:00.000Z'],
    ['unmute', annChat, undefined],
    ['unread', '120363041234567890@g.us', undefined],
    ['delete-chat', annChat, undefined],
  ]);
  t.is((await w.call('POST', `/chats/${annChat}/mute`, { json: { until: 'tomorrow' } })).status, 400);
  t.is((await w.call('POST', `/chats/${annChat}/archive`, { json: { archived: true, extra: 1 } })).status, 400);
  t.is((await w.call('POST', '/chats/not-a-chat/pin', { json: { pinned: true } })).status, 400);
});

test('labels: 409 NOT_BUSINESS on a personal account; on a Business one, labels listed, put on and taken off chats, each a label.updated event', async (t) => {
  const w = await world(t);
  const personal = await w.call('GET', '/labels');
  t.is(personal.status, 409);
  t.is(personal.body.error.code, 'NOT_BUSINESS');
  t.is((await w.call('POST', `/chats/${annChat}/labels`, { json: { add: ['1'] } })).status, 409);
  await w.call('POST', '/sandbox/account', { json: { business: true } });
  t.true((await w.call('GET', '/profile')).body.business);
  await w.call('POST', '/sandbox/label', { json: { id: '1', name: 'New customer', color: 1 } });
  await w.call('POST', '/sandbox/label', { json: { id: '2', name: 'Pending payment', color: 3 } });
  const added = await w.call('POST', `/chats/${annChat}/labels`, { json: { add: ['1', '2'] } });
  t.deepEqual(added.body, { success: true, instanceId: w.inst.id, chatId: annChat, phone: ann, added: ['1', '2'], removed: [] });
  await w.call('POST', `/chats/${annChat}/labels`, { json: { remove: ['2'] } });
  t.deepEqual((await w.call('GET', '/labels')).body.labels, [
    { id: '1', name: 'New customer', color: 1, chats: [annChat] },
    { id: '2', name: 'Pending payment', color: 3, chats: [] },
  ]);
  t.is((await w.call('POST', `/chats/${annChat}/labels`, { json: { add: ['9'] } })).status, 404);
  t.is((await w.call('POST', `/chats/${annChat}/labels`, { json: {} })).body.error.code, 'MISSING_FIELD');
  t.is((await w.call('POST', `/chats/${annChat}/labels`, { json: { add: ['1'], remove: ['1'] } })).status, 400);
  await w.call('POST', '/sandbox/label', { json: { id: '2', name: 'Pending payment', deleted: true } });
  const events = await waitFor(() => (w.events('label.updated').length >= 6 ? w.events('label.updated') : null), 5000, 'label.updated events');
  t.deepEqual(events, [
    { labelId: '1', action: 'edited', name: 'New customer', color: 1 },
    { labelId: '2', action: 'edited', name: 'Pending payment', color: 3 },
    { labelId: '1', action: 'chat-added', chatId: annChat, phone: ann },
    { labelId: '2', action: 'chat-added', chatId: annChat, phone: ann },
    { labelId: '2', action: 'chat-removed', chatId: annChat, phone: ann },
    { labelId: '2', action: 'deleted', name: 'Pending payment', color: 0 },
  ]);
});

test('status posts cost one credit: a text to the contacts, media to a named audience; not a chat', async (t) => {
  const w = await world(t, 2);
  const text = await w.call('POST', '/status', { json: { text: 'Open until 8 pm', backgroundColor: '#25D366', font: 1 } });
  t.is(text.status, 200, JSON.stringify(text.body));
  t.like(text.body, { type: 'text', audience: 'contacts', quotaRemaining: '1' });
  const form = new FormData();
  form.set('caption', 'New in store');
  form.set('file', new Blob([new Uint8Array(randomPng(8))], { type: 'image/png' }), 'new.png');
  // Multipart fields are single values: the audience is a JSON body's (a media status by url or base64).
  const image = await w.call('POST', '/status', { json: { base64: randomPng(8).toString('base64'), caption: 'New in store', audience: [ann, '15557654321@s.whatsapp.net'] } });
  t.like(image.body, { type: 'image', audience: 2, quotaRemaining: '0' });
  const broke = await w.call('POST', '/status', { body: form });
  t.is(broke.status, 403);
  const log = (await w.call('GET', '/sandbox/sent')).body.messages as Array<Record<string, unknown>>;
  t.deepEqual(
    log.map((m) => [m.to, m.type, m.message ?? m.caption, m.audience]),
    [
      ['status@broadcast', 'text', 'Open until 8 pm', undefined],
      ['status@broadcast', 'image', 'New in store', [annChat, '15557654321@s.whatsapp.net']],
    ],
  );
  t.is((await w.call('POST', '/status', { json: {} })).body.error.code, 'MISSING_FIELD');
  t.is((await w.call('POST', '/status', { json: { text: 'x', caption: 'y' } })).status, 400);
  t.is((await w.call('POST', '/status', { json: { text: 'x', backgroundColor: 'green' } })).status, 400);
  const chats = (await w.call('GET', '/chats')).body.chats as Array<{ chatId: string }>;
  t.false(chats.some((c) => c.chatId === 'status@broadcast'));
});
