/**
 * Guards issue 24 items 2 and 3 through the protocol double with real Baileys (an in-process
 * daemon, real HTTP, webhooks to a real receiver): message.sent for what the account's phone
 * sends (deviceSentMessage), never for the gateway's own sends; contacts with the LID <-> phone
 * lookup (Baileys' mapping, else usync), about text and picture; block and the block list (IQs);
 * the profile (name as an app-state patch, about, picture set and removed); chat settings and
 * labels as app-state patches whose every MAC the double checks against its own LT hash; labels
 * edited on the phone (server_sync) as label.updated; 409 NOT_BUSINESS on a personal account; a
 * text status post decrypted by its audience (sender keys to status@broadcast); and (issue 26 item 3)
 * a push name known only from the history sync still names its contact, now that history sets skip
 * most of Baileys' event buffer, and history syncs are decoded without their messages' content
 * (src/connection/baileys/history-decode.ts: the LID mapping and push names below come through it),
 * app-state mutations decrypted without a Decipher object each (src/domain/aes-cbc.ts), and every
 * Noise frame sealed and opened without a Cipher object each (src/domain/aes-gcm.ts).
 *
 * Media (voice notes, stickers, video notes, media status posts, re-upload) needs the media host's
 * CA at process start: test/e2e/double-account-media.test.ts, with the built daemon.
 */
import test from 'ava';
import { DEFAULT_CONNECTION_CONFIG } from '@whiskeysockets/baileys';
import { startDoubleDaemon, type DoubleDaemon } from '../protocol-double/harness.js';
import { installCdn } from '../protocol-double/index.js';
import { PUSH_NAME_ONLY, type AccountDataSpec } from '../protocol-double/account-data.js';
import { randomPng } from '../protocol-double/fixtures.js';
import { waitFor, type ApiResponse } from '../helpers/daemon.js';
import { BAILEYS_HISTORY_DECODE_KEY } from '../../src/connection/baileys/history-decode.js';
import { BAILEYS_AES_CBC_KEY, BAILEYS_AES_GCM_DECRYPT_KEY, BAILEYS_AES_GCM_ENCRYPT_KEY } from '../../src/connection/baileys/baileys-aes.js';
import { setWebhook, startReceiver, type Receiver } from '../helpers/receiver.js';

// Baileys never clears the timers of queries pending when a socket ends (60 s by default).
DEFAULT_CONNECTION_CONFIG.defaultQueryTimeoutMs = 5000;

/** A small account with app state (and so an app-state key): 3 address-book contacts, 2 chats, labels. */
const SPEC: AccountDataSpec = { contacts: 3, chats: 2, messages: 4, groups: 0, groupSenders: 0 };
const BUSINESS_PHONE = '15550000001';
const PERSONAL_PHONE = '15550000009';

let h: DoubleDaemon;
let receiver: Receiver;
let biz: { id: string; key: string };
let personal: { id: string; key: string };
/** History syncs Baileys decoded through the gateway's lean decoder (counted around the installed one). */
let leanDecodes = 0;
let appStateDecrypts = 0;
let framesSealed = 0;
let framesOpened = 0;

type Event = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- asserted field by field

async function pair(options: { phone: string; platform?: string; accountData?: AccountDataSpec | 'empty' }): Promise<{ id: string; key: string }> {
  const inst = await h.createInstance();
  await h.waitStatus(inst.id, inst.key, 'qr_code_generated');
  const qr = (await h.qrCode(inst.id, inst.key)).body.qr as string;
  const device = await h.double.scan(qr, { phone: options.phone, ...(options.platform ? { platform: options.platform } : {}), ...(options.accountData ? { accountData: options.accountData } : {}) });
  await h.waitStatus(inst.id, inst.key, 'connected');
  await h.double.synced(device, 20_000);
  return inst;
}

const api = (inst: { id: string; key: string }, method: string, path: string, options: { json?: unknown; body?: FormData } = {}): Promise<ApiResponse> =>
  h.d.request(method, `/api/${inst.id}${path}`, { key: inst.key, ...options });
const events = (type: string, inst = biz): Event[] => receiver.requests.filter((r) => r.json.type === type && r.json.instanceId === inst.id).map((r) => r.json.data as Event);
const account = () => h.double.account(BUSINESS_PHONE);
const patchesFor = (collection: string) => h.double.accountSide.patches.filter((p) => p.account === BUSINESS_PHONE && p.collection === collection);

test.before(async () => {
  h = await startDoubleDaemon({ double: { accountData: SPEC }, config: { sending: { minIntervalMs: 0, jitterMs: 0 } } });
  // History syncs and app-state snapshots come from WhatsApp's CDN host: the double's media host.
  await installCdn(h.double.media.hostname);
  receiver = await startReceiver();
  // The daemon's Baileys connection module installs the lean decoder when it loads: load it now (the
  // same module the in-process daemon uses) and count what goes through it.
  await import('../../src/connection/baileys/connection.js');
  const g = globalThis as Record<symbol, unknown>;
  const lean = g[BAILEYS_HISTORY_DECODE_KEY] as (bytes: Uint8Array) => unknown;
  g[BAILEYS_HISTORY_DECODE_KEY] = (bytes: Uint8Array) => (leanDecodes++, lean(bytes));
  // And Baileys' AES-CBC decryptions (app-state mutations), object-free (src/connection/baileys/baileys-aes.ts).
  const decrypt = g[BAILEYS_AES_CBC_KEY] as (data: Uint8Array, key: Uint8Array, iv: Uint8Array) => Buffer;
  g[BAILEYS_AES_CBC_KEY] = (data: Uint8Array, key: Uint8Array, iv: Uint8Array) => (appStateDecrypts++, decrypt(data, key, iv));
  // And the Noise transport's frames (AES-GCM, src/domain/aes-gcm.ts): every test below runs through them.
  type Gcm = (data: Uint8Array, key: Uint8Array, iv: Uint8Array, aad: Uint8Array) => Buffer;
  const seal = g[BAILEYS_AES_GCM_ENCRYPT_KEY] as Gcm;
  const open = g[BAILEYS_AES_GCM_DECRYPT_KEY] as Gcm;
  g[BAILEYS_AES_GCM_ENCRYPT_KEY] = ((...a) => (framesSealed++, seal(...a))) as Gcm;
  g[BAILEYS_AES_GCM_DECRYPT_KEY] = ((...a) => (framesOpened++, open(...a))) as Gcm;
  biz = await pair({ phone: BUSINESS_PHONE, platform: 'smba' });
  await setWebhook(h.d, biz, receiver.url, { events: null });
  personal = await pair({ phone: PERSONAL_PHONE, accountData: 'empty' });
  await setWebhook(h.d, personal, receiver.url, { events: null });
});

test.after.always(async () => {
  await h?.close();
  await receiver?.close();
});

test.afterEach.always((t) => {
  if (h.double.errors.length > 0) t.log(h.double.errors);
});

test.serial('what the phone sends is message.sent with fromMe, in history; the gateway\'s own sends are not repeated', async (t) => {
  const alice = await h.double.contact('+15550000201', { name: 'Alice' });
  const bob = await h.double.contact('+15550000202', { name: 'Bob', addressing: 'lid' });
  // The gateway's own send first: Baileys echoes it as fromMe, which must not become message.sent.
  const own = await api(biz, 'POST', '/send', { json: { phone: alice.phone, message: 'from the gateway' } });
  t.is(own.status, 200, JSON.stringify(own.body));
  await alice.nextMessage();
  const id = await h.double.accountSide.phoneSends(account(), alice.jid, { conversation: 'typed on the phone' });
  const sent = await waitFor(() => events('message.sent').find((e) => e.messageId === id), 10_000, 'message.sent');
  t.like(sent, { chatId: alice.jid, isGroup: false, fromMe: true, type: 'text', text: 'typed on the phone', from: `+${BUSINESS_PHONE}`, sender: `${BUSINESS_PHONE}@s.whatsapp.net` });
  t.like((await api(biz, 'GET', `/messages/${id}`)).body, { fromMe: true, chatId: alice.jid, status: 'sent', text: 'typed on the phone' });
  // To a LID chat whose number the mapping knows (usync gave it when the gateway wrote to Bob): the phone chat.
  await api(biz, 'POST', '/send', { json: { phone: bob.phone, message: 'hi Bob' } });
  await bob.nextMessage();
  const toLid = await h.double.accountSide.phoneSends(account(), bob.lid, { conversation: 'to a LID chat' });
  t.like(await waitFor(() => events('message.sent').find((e) => e.messageId === toLid), 10_000, 'message.sent to a LID chat'), { chatId: bob.jid, text: 'to a LID chat' });
  t.deepEqual(events('message.sent').map((e) => e.text), ['typed on the phone', 'to a LID chat'], 'only what the phone sent');
  t.false(events('message.received').some((e) => e.messageId === id || e.messageId === toLid));
  t.deepEqual(h.double.errors, []);
});

test.serial('contacts: the LID <-> phone lookup (mapping, usync), name (address book, else the history\'s push names), about, picture; a number without WhatsApp', async (t) => {
  const carol = await h.double.contact('+15550000203', { name: 'Carol' });
  h.double.accountSide.setProfile(carol, { about: 'Busy', picture: randomPng(4) });
  // Nothing known of Carol yet: her LID comes from WhatsApp (usync), about and picture too.
  const byPhone = await api(biz, 'GET', `/contacts/${encodeURIComponent(carol.phone)}`);
  t.is(byPhone.status, 200, JSON.stringify(byPhone.body));
  t.deepEqual(byPhone.body, {
    success: true,
    instanceId: biz.id,
    chatId: carol.jid,
    phone: carol.phone,
    lid: carol.lid,
    about: 'Busy',
    pictureUrl: h.double.accountSide.profileOf(carol.jid)?.pictureUrl,
    exists: true,
  });
  // Now the mapping knows her: the LID finds the phone.
  t.like((await api(biz, 'GET', `/contacts/${carol.lid}`)).body, { chatId: carol.jid, phone: carol.phone, lid: carol.lid });
  // An address-book person: the name from app state (as a later patch renamed it), the LID from the
  // history sync's mapping.
  const ana = await h.double.contact('+17770000000');
  const book = await api(biz, 'GET', '/contacts/+17770000000');
  t.like(book.body, { chatId: ana.jid, phone: ana.phone, lid: ana.lid, name: 'Ana Silva (work)', exists: true });
  // Someone outside the address book, named only by the push names of the history sync.
  const walkIn = await h.double.contact(`+${PUSH_NAME_ONLY.phone}`);
  t.like((await api(biz, 'GET', `/contacts/+${PUSH_NAME_ONLY.phone}`)).body, { chatId: walkIn.jid, phone: walkIn.phone, name: PUSH_NAME_ONLY.name, exists: true });
  // Those came through the lean decoder: the inline bootstrap, the RECENT and the PUSH_NAME syncs.
  t.true(leanDecodes >= 3, `${leanDecodes} history syncs decoded lean`);
  // Ana's name (a contact action of the app state, renamed by a later patch) was decrypted by the
  // gateway's AES-CBC, as was every other mutation of the account's first app-state sync.
  t.true(appStateDecrypts >= 2, `${appStateDecrypts} app-state mutations decrypted`);
  // Both accounts' Noise frames, each way, went through the gateway's GCM.
  t.true(framesSealed >= 20 && framesOpened >= 20, `${framesSealed} frames sealed, ${framesOpened} opened`);
  // A LID whose number WhatsApp never gave (a hidden number): no phone.
  const dana = await h.double.contact('+15550000204', { addressing: 'lid', alt: false });
  t.deepEqual((await api(biz, 'GET', `/contacts/${dana.lid}`)).body, { success: true, instanceId: biz.id, chatId: dana.lid, lid: dana.lid, exists: true });
  t.like((await api(biz, 'GET', '/contacts/+15559999999')).body, { phone: '+15559999999', exists: false });
  t.deepEqual(h.double.errors, []);
});

test.serial('block and unblock go to WhatsApp (LID with the phone JID), the block list comes from it with phones', async (t) => {
  const erin = await h.double.contact('+15550000205', { name: 'Erin' });
  const blocked = await api(biz, 'POST', `/contacts/${erin.jid}/block`, { json: { blocked: true } });
  t.deepEqual(blocked.body, { success: true, instanceId: biz.id, chatId: erin.jid, phone: erin.phone, blocked: true });
  t.deepEqual(h.double.accountSide.blocklistOf(account()), [erin.lid]);
  t.deepEqual((await api(biz, 'GET', '/blocklist')).body.blocked, [{ chatId: erin.jid, phone: erin.phone }]);
  await api(biz, 'POST', `/contacts/${erin.phone}/block`, { json: { blocked: false } });
  t.deepEqual(h.double.accountSide.blocklistOf(account()), []);
  t.deepEqual((await api(biz, 'GET', '/blocklist')).body.blocked, []);
  t.deepEqual(h.double.errors, []);
});

test.serial('profile: name (an app-state patch), about, picture set (a JPEG) and removed; business from the pairing', async (t) => {
  const before = await api(biz, 'GET', '/profile');
  t.like(before.body, { jid: `${BUSINESS_PHONE}@s.whatsapp.net`, phone: `+${BUSINESS_PHONE}`, name: `Account ${BUSINESS_PHONE}`, about: '', business: true });
  const changed = await api(biz, 'PUT', '/profile', { json: { name: 'Acme Shop', about: 'Open 9 to 5' } });
  t.is(changed.status, 200, JSON.stringify(changed.body));
  t.like(changed.body, { name: 'Acme Shop', about: 'Open 9 to 5' });
  const pushName = patchesFor('critical_block').at(-1)?.mutations[0];
  t.like(pushName, { operation: 'set', index: ['setting_pushName'], value: { pushNameSetting: { name: 'Acme Shop' } } });
  t.is(h.double.accountSide.profileOf(h.double.accountJid(BUSINESS_PHONE))?.about, 'Open 9 to 5');

  const form = new FormData();
  form.set('file', new Blob([new Uint8Array(randomPng(32))], { type: 'image/png' }), 'logo.png');
  t.like((await api(biz, 'PUT', '/profile/picture', { body: form })).body, { picture: true });
  const upload = h.double.accountSide.pictureUploads.at(-1);
  t.is(upload?.bytes?.subarray(0, 2).toString('hex'), 'ffd8', 'Baileys made a JPEG of the PNG (sharp)');
  t.is((await api(biz, 'GET', '/profile')).body.pictureUrl, h.double.accountSide.profileOf(h.double.accountJid(BUSINESS_PHONE))?.pictureUrl);
  t.like((await api(biz, 'DELETE', '/profile/picture')).body, { picture: false });
  t.is(h.double.accountSide.pictureUploads.at(-1)?.bytes, null);
  t.is((await api(biz, 'GET', '/profile')).body.pictureUrl, undefined);
  t.false((await api(personal, 'GET', '/profile')).body.business);
  t.deepEqual(h.double.errors, []);
});

test.serial('chat settings are app-state patches the double checks MAC by MAC: archive, pin, mute, unmute, unread, delete', async (t) => {
  const alice = await h.double.contact('+15550000201');
  const chat = alice.jid;
  const ok = async (method: string, path: string, json?: unknown) => {
    const res = await api(biz, method, path, json === undefined ? {} : { json });
    t.is(res.status, 200, `${method} ${path}: ${JSON.stringify(res.body)}`);
  };
  const low = patchesFor('regular_low').length;
  const high = patchesFor('regular_high').length;
  await ok('POST', `/chats/${chat}/archive`, { archived: true });
  await ok('POST', `/chats/${chat}/pin`, { pinned: true });
  await ok('POST', `/chats/${chat}/mute`, { until: '2030-01-01T00:00:00Z' });
  await ok('POST', `/chats/${chat}/mute`, { until: null });
  await ok('POST', `/chats/${chat}/unread`);
  const kept = (await api(biz, 'GET', `/chats/${chat}/messages`)).body.messages.length as number;
  t.true(kept >= 2, 'the chat has history (the first test wrote to it)');
  const deleted = await api(biz, 'DELETE', `/chats/${chat}`);
  t.like(deleted.body, { deleted: true, messagesRemoved: kept });
  t.is((await api(biz, 'GET', `/chats/${chat}/messages`)).status, 404, 'gone from history too');
  const lowPatches = patchesFor('regular_low').slice(low).map((p) => p.mutations[0]!);
  const highPatches = patchesFor('regular_high').slice(high).map((p) => p.mutations[0]!);
  t.like(lowPatches[0], { index: ['archive', chat], value: { archiveChatAction: { archived: true } } });
  t.like(lowPatches[1], { index: ['pin_v1', chat], value: { pinAction: { pinned: true } } });
  t.like(lowPatches[2], { index: ['markChatAsRead', chat], value: { markChatAsReadAction: { read: false } } });
  t.like(highPatches[0], { index: ['mute', chat], value: { muteAction: { muted: true } } });
  t.is(Number(highPatches[0]!.value.muteAction?.muteEndTimestamp), Date.parse('2030-01-01T00:00:00Z'));
  t.like(highPatches[1], { index: ['mute', chat], value: { muteAction: { muted: false } } });
  t.like(highPatches[2], { index: ['deleteChat', chat, '1'] });
  // The archive names the chat's last message (WhatsApp applies it up to there).
  t.true((lowPatches[0]!.value.archiveChatAction?.messageRange?.messages?.length ?? 0) > 0);
  t.deepEqual(h.double.errors, [], 'every patch checked out against the double\'s LT hash');
});

test.serial("labels: the account's labels from app state; a chat labelled and unlabelled (patches); a label made on the phone arrives as label.updated", async (t) => {
  const listed = await api(biz, 'GET', '/labels');
  t.is(listed.status, 200, JSON.stringify(listed.body));
  t.deepEqual(
    (listed.body.labels as Array<{ id: string; name: string; color: number }>).map((l) => [l.id, l.name, l.color]),
    [
      ['1', 'New customer', 1],
      ['2', 'Pending payment', 3],
      ['3', 'Important', 5],
    ],
  );
  const alice = await h.double.contact('+15550000201');
  const added = await api(biz, 'POST', `/chats/${alice.jid}/labels`, { json: { add: ['3'] } });
  t.like(added.body, { chatId: alice.jid, phone: alice.phone, added: ['3'], removed: [] });
  t.like(patchesFor('regular').at(-1)?.mutations[0], { index: ['label_jid', '3', alice.jid], value: { labelAssociationAction: { labeled: true } } });
  await waitFor(() => events('label.updated').find((e) => e.labelId === '3' && e.action === 'chat-added'), 10_000, 'label.updated chat-added');
  t.like(events('label.updated').find((e) => e.labelId === '3' && e.action === 'chat-added'), { chatId: alice.jid, phone: alice.phone });
  t.deepEqual((await api(biz, 'GET', '/labels')).body.labels.find((l: { id: string }) => l.id === '3').chats, [alice.jid]);
  await api(biz, 'POST', `/chats/${alice.jid}/labels`, { json: { remove: ['3'] } });
  await waitFor(() => events('label.updated').find((e) => e.labelId === '3' && e.action === 'chat-removed'), 10_000, 'label.updated chat-removed');
  t.is((await api(biz, 'POST', `/chats/${alice.jid}/labels`, { json: { add: ['42'] } })).status, 404);

  h.double.accountSide.phonePatch(account(), 'regular', [{ index: ['label_edit', '4'], value: { timestamp: Date.now(), labelEditAction: { name: 'VIP', color: 7, deleted: false } }, version: 3 }]);
  t.deepEqual(await waitFor(() => events('label.updated').find((e) => e.labelId === '4'), 10_000, 'label.updated from the phone'), { labelId: '4', action: 'edited', name: 'VIP', color: 7 });
  t.true((await api(biz, 'GET', '/labels')).body.labels.some((l: { id: string; name: string }) => l.id === '4' && l.name === 'VIP'));

  const refused = await api(personal, 'GET', '/labels');
  t.is(refused.status, 409);
  t.is(refused.body.error.code, 'NOT_BUSINESS');
  t.is((await api(personal, 'POST', `/chats/${alice.jid}/labels`, { json: { add: ['1'] } })).status, 409);
  t.deepEqual(h.double.errors, []);
});

test.serial('a text status post reaches its audience (sender key to status@broadcast) and costs one credit', async (t) => {
  const fran = await h.double.contact('+15550000206', { name: 'Fran' });
  const res = await api(biz, 'POST', '/status', { json: { text: 'Open until 8 pm', backgroundColor: '#25D366', font: 1, audience: [fran.phone] } });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body, { type: 'text', audience: 1 });
  const seen = await fran.nextMessage();
  t.is(seen.chat, 'status@broadcast');
  t.is(seen.encType, 'skmsg');
  t.is(seen.text, 'Open until 8 pm');
  t.is(seen.message.extendedTextMessage?.backgroundArgb, 0xff25d366);
  t.is(h.double.accountSide.statusPosts.at(-1)?.attrs.id, res.body.messageId);
  // Without an audience: the address book (the app state's contacts).
  const book = await Promise.all(['+17770000000', '+17770000001', '+17770000002'].map((p) => h.double.contact(p)));
  const toContacts = await api(biz, 'POST', '/status', { json: { text: 'Hello contacts' } });
  t.like(toContacts.body, { audience: 'contacts' });
  for (const c of book) t.is((await c.nextMessage()).text, 'Hello contacts');
  t.deepEqual(h.double.errors, []);
});

test.serial("after a daemon restart the labels and contact names are still known (kept in the auth state with Baileys' app-state versions, which sends only what changed since)", async (t) => {
  await h.restart();
  await h.waitStatus(biz.id, biz.key, 'connected');
  const labels = (await api(biz, 'GET', '/labels')).body.labels as Array<{ id: string; name: string }>;
  t.deepEqual(labels.map((l) => l.name), ['New customer', 'Pending payment', 'Important', 'VIP']);
  t.is((await api(biz, 'GET', '/contacts/+17770000000')).body.name, 'Ana Silva (work)');
  t.deepEqual(h.double.errors, []);
});
