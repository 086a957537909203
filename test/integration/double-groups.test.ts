/**
 * Guards issue 24, contract part 3 "Groups", through real Baileys on the protocol double (an
 * in-process daemon): POST /groups with a status per participant (a contact whose privacy refuses
 * a direct add gets an invite message instead; an unknown number is not_on_whatsapp), PUT settings,
 * participants, invite link (reset), join, leave, picture, 403 NOT_GROUP_ADMIN where WhatsApp
 * refuses a non-admin, and the events group.joined / group.updated / group.participants from
 * WhatsApp's group notifications (the account's own changes and other people's). And sender-key
 * rotation: after a member is removed (by the account or by another admin), a group message reaches
 * the remaining members and not the removed one, who cannot decrypt it with the key they kept; a
 * new member gets the new key.
 */
import test from 'ava';
import { DEFAULT_CONNECTION_CONFIG, getBinaryNodeChildren } from '@whiskeysockets/baileys';
import type { GatewayEvent } from '../../src/events/types.js';
import { waitFor } from '../helpers/daemon.js';
import { startDoubleDaemon, type DoubleDaemon } from '../protocol-double/harness.js';
import { randomPng } from '../protocol-double/fixtures.js';
import type { Contact, ContactMessage } from '../protocol-double/contact.js';

// Baileys never clears the timers of queries pending when a socket ends (60 s by default).
DEFAULT_CONNECTION_CONFIG.defaultQueryTimeoutMs = 5000;

let h: DoubleDaemon;
let inst: { id: string; key: string };
const events: GatewayEvent[] = [];

test.before(async () => {
  // No pacing: the anti-ban queue is tested on its own (groups-sandbox.test.ts).
  h = await startDoubleDaemon({ config: { sending: { minIntervalMs: 0, jitterMs: 0 } } });
  h.d.core.bus.register({ name: 'test', handle: async (e) => void events.push(e) });
  inst = await h.pairedInstance();
});

test.after.always(async () => {
  await h?.close();
});

test.afterEach.always((t) => {
  t.deepEqual(h.double.errors, [], 'nothing the double could not decrypt, no nack, no removed member reading');
});

const api = (method: string, path: string, json?: unknown, body?: BodyInit) => h.d.request(method, `/api/${inst.id}${path}`, { key: inst.key, ...(json !== undefined ? { json } : {}), ...(body ? { body } : {}) });
function waitEvent<T extends GatewayEvent['type']>(type: T, match: (e: Extract<GatewayEvent, { type: T }>) => boolean): Promise<Extract<GatewayEvent, { type: T }>> {
  return waitFor(() => events.find((e): e is Extract<GatewayEvent, { type: T }> => e.type === type && match(e as Extract<GatewayEvent, { type: T }>)), 10_000, `a ${type} event`);
}
const me = () => ({ jid: h.double.accountLid(), phone: `+${h.double.account().phone}` });
const lidOf = (c: Contact) => ({ jid: c.lid, phone: c.phone });

/** Sends a text to the group and waits until each of `members` decrypted it. */
async function sendToGroup(chatId: string, text: string, members: Contact[]): Promise<Map<Contact, ContactMessage>> {
  const res = await api('POST', '/send', { to: chatId, message: text });
  if (res.status !== 200) throw new Error(`send failed: ${res.status} ${JSON.stringify(res.body)}`);
  const out = new Map<Contact, ContactMessage>();
  for (const m of members) out.set(m, await waitFor(() => m.messages.find((x) => x.id === res.body.messageId), 10_000, `${m.phone} got ${text}`));
  return out;
}

/** Whether a group stanza handed `contact` a sender key (a pairwise `<to>` for them). */
const carriesKeyFor = (m: ContactMessage, contact: Contact): boolean =>
  getBinaryNodeChildren(getBinaryNodeChildren(m.stanza, 'participants')[0], 'to').some((to) => to.attrs.jid === contact.lid || to.attrs.jid === contact.jid);

test.serial('POST /groups: added, invited (privacy refused a direct add: the person gets an invite message), not_on_whatsapp; group.joined', async (t) => {
  const alice = await h.double.contact('+15550100001', { name: 'Alice' });
  const bob = await h.double.contact('+15550100002', { name: 'Bob' });
  h.double.groupOps.refuseAdds(bob);
  const created = await api('POST', '/groups', { subject: 'Project', participants: [alice.phone, bob.phone, '+15550109999'] });
  t.is(created.status, 201, JSON.stringify(created.body));
  const chatId = created.body.chatId as string;
  t.deepEqual(created.body.participants, [
    { jid: alice.jid, phone: alice.phone, status: 'added' },
    { jid: bob.jid, phone: bob.phone, status: 'invited' },
    { jid: '15550109999@s.whatsapp.net', phone: '+15550109999', status: 'not_on_whatsapp' },
  ]);
  const group = h.double.groups.get(chatId)!;
  t.truthy(group);
  t.true(group.has(alice));
  t.false(group.has(bob));
  const invite = await bob.nextMessage();
  t.like(invite.message.groupInviteMessage, { groupJid: chatId, groupName: 'Project' });
  t.truthy(invite.message.groupInviteMessage?.inviteCode);
  const joined = await waitEvent('group.joined', (e) => e.data.chatId === chatId);
  t.like(joined.data, { subject: 'Project', by: me() });
  const info = (await api('GET', `/groups/${chatId}`)).body;
  t.like(info, { subject: 'Project', announce: false, locked: false });
  t.deepEqual(info.participants.map((p: { jid: string; admin: boolean }) => [p.jid, p.admin]), [[h.double.accountLid(), true], [alice.lid, false]]);
});

test.serial('PUT /groups/{chatId}: subject, description, announce and locked reach WhatsApp, and come back as group.updated', async (t) => {
  const cleo = await h.double.contact('+15550100003');
  const group = h.double.group('Settings', [cleo]);
  const res = await api('PUT', `/groups/${group.jid}`, { subject: 'Settings v2', description: 'all about it', announce: true, locked: true });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(group.subjectNow, 'Settings v2');
  t.is(group.description, 'all about it');
  t.true(group.announce);
  t.true(group.locked);
  const updates = () => events.filter((e): e is Extract<GatewayEvent, { type: 'group.updated' }> => e.type === 'group.updated' && e.data.chatId === group.jid);
  await waitFor(() => updates().length >= 4 || undefined, 10_000, 'four group.updated');
  t.deepEqual(
    updates().map((e) => ({ ...e.data, timestamp: undefined })),
    [
      { chatId: group.jid, subject: 'Settings v2', by: me(), timestamp: undefined },
      { chatId: group.jid, description: 'all about it', by: me(), timestamp: undefined },
      { chatId: group.jid, announce: true, by: me(), timestamp: undefined },
      { chatId: group.jid, locked: true, by: me(), timestamp: undefined },
    ],
  );
  t.like((await api('GET', `/groups/${group.jid}`)).body, { subject: 'Settings v2', description: 'all about it', announce: true, locked: true });
  t.is((await api('PUT', `/groups/${group.jid}`, { description: '' })).status, 200);
  t.is(group.description, undefined);
  await waitEvent('group.updated', (e) => e.data.chatId === group.jid && e.data.description === '');
});

test.serial('sender keys rotate: after a removal the next group message reaches the members left and not the one removed (who cannot decrypt it); a new member gets the new key', async (t) => {
  const [ann, ben, cat, dan] = await Promise.all(['+15550100011', '+15550100012', '+15550100013', '+15550100014'].map((p, i) => h.double.contact(p, { name: ['Ann', 'Ben', 'Cat', 'Dan'][i]! })));
  const group = h.double.group('Rotation', [ann!, ben!, cat!]);

  const first = await sendToGroup(group.jid, 'one', [ann!, ben!, cat!]);
  t.true(carriesKeyFor(first.get(cat!)!, cat!), 'Cat got the sender key with the first message');

  const removed = await api('POST', `/groups/${group.jid}/participants`, { action: 'remove', participants: [cat!.phone] });
  t.is(removed.status, 200, JSON.stringify(removed.body));
  t.deepEqual(removed.body.participants, [{ jid: cat!.jid, phone: cat!.phone, status: 'removed' }]);
  t.false(group.has(cat!));
  const event = await waitEvent('group.participants', (e) => e.data.chatId === group.jid && e.data.action === 'remove');
  t.like(event.data, { participants: [lidOf(cat!)], by: me() });

  const catHad = cat!.messages.length;
  const second = await sendToGroup(group.jid, 'two', [ann!, ben!]);
  // A new key went to each member left (pairwise), and none to Cat; the double tried the group
  // ciphertext with the key Cat kept and it did not decrypt (afterEach: no error).
  t.true(carriesKeyFor(second.get(ann!)!, ann!) && carriesKeyFor(second.get(ben!)!, ben!), 'a new sender key for each member left');
  t.false(carriesKeyFor(second.get(ann!)!, cat!));
  t.is(cat!.messages.length, catHad, 'Cat received nothing');

  const added = await api('POST', `/groups/${group.jid}/participants`, { action: 'add', participants: [dan!.phone, ann!.phone] });
  t.deepEqual(added.body.participants.map((p: { status: string }) => p.status), ['added', 'already_in_group']);
  await waitEvent('group.participants', (e) => e.data.chatId === group.jid && e.data.action === 'add');
  const third = await sendToGroup(group.jid, 'three', [ann!, ben!, dan!]);
  t.true(carriesKeyFor(third.get(dan!)!, dan!), 'the new member gets the key');
  t.is(third.get(dan!)!.text, 'three');
  t.is(cat!.messages.length, catHad);

  // Another admin removes a member: WhatsApp's notification makes the gateway rotate too.
  const promoted = await api('POST', `/groups/${group.jid}/participants`, { action: 'promote', participants: [ann!.phone] });
  t.is(promoted.body.participants[0].status, 'promoted');
  t.true(group.isAdmin(ann!));
  await waitEvent('group.participants', (e) => e.data.chatId === group.jid && e.data.action === 'promote');
  await h.double.groupOps.remove(group, [ben!], ann!);
  const byAnn = await waitEvent('group.participants', (e) => e.data.chatId === group.jid && e.data.action === 'remove' && e.data.by?.jid === ann!.lid);
  t.deepEqual(byAnn.data.participants, [lidOf(ben!)]);
  t.deepEqual(byAnn.data.by, lidOf(ann!));
  const benHad = ben!.messages.length;
  const fourth = await sendToGroup(group.jid, 'four', [ann!, dan!]);
  t.true(carriesKeyFor(fourth.get(dan!)!, dan!), 'rotated again');
  t.is(ben!.messages.length, benHad);

  // The members left rotated theirs too (as WhatsApp's apps do): Ann's next message brings a new key, which the gateway takes.
  const fromAnn = await ann!.sendText(group.jid, 'after Ben left');
  const received = await waitEvent('message.received', (e) => e.data.messageId === fromAnn);
  t.like(received.data, { chatId: group.jid, text: 'after Ben left', from: ann!.phone });

  const demoted = await api('POST', `/groups/${group.jid}/participants`, { action: 'demote', participants: [ann!.phone, ben!.phone] });
  t.deepEqual(demoted.body.participants.map((p: { status: string }) => p.status), ['demoted', 'not_in_group']);
});

test.serial("403 NOT_GROUP_ADMIN in someone else's group; what its admin does arrives as events; the invite link (reset), leave and join", async (t) => {
  const erin = await h.double.contact('+15550100021', { name: 'Erin' });
  const fred = await h.double.contact('+15550100022');
  const group = h.double.group('Erin runs this', [erin, fred], { creator: erin });
  for (const [method, path, json] of [
    ['POST', `/groups/${group.jid}/participants`, { action: 'remove', participants: [fred.phone] }],
    ['PUT', `/groups/${group.jid}`, { announce: true }],
    ['GET', `/groups/${group.jid}/invite`, undefined],
    ['DELETE', `/groups/${group.jid}/invite`, undefined],
  ] as const) {
    const res = await api(method, path, json);
    t.is(res.status, 403, `${method} ${path}: ${JSON.stringify(res.body)}`);
    t.is(res.body.error.code, 'NOT_GROUP_ADMIN');
  }
  t.true(group.has(fred));
  // An unlocked group's subject is anyone's to change; a locked one's only the admins'.
  t.is((await api('PUT', `/groups/${group.jid}`, { subject: 'Renamed by a member' })).status, 200);
  await h.double.groupOps.setSettings(group, { locked: true }, erin);
  const locked = await waitEvent('group.updated', (e) => e.data.chatId === group.jid && e.data.locked === true);
  t.deepEqual(locked.data.by, lidOf(erin));
  t.is((await api('PUT', `/groups/${group.jid}`, { subject: 'Again' })).body.error?.code, 'NOT_GROUP_ADMIN');
  const form = new FormData();
  form.set('file', new Blob([new Uint8Array(randomPng(8))], { type: 'image/png' }), 'p.png');
  t.is((await api('PUT', `/groups/${group.jid}/picture`, undefined, form)).body.error?.code, 'NOT_GROUP_ADMIN');

  await h.double.groupOps.promote(group, [h.double.account()], erin);
  const promoted = await waitEvent('group.participants', (e) => e.data.chatId === group.jid && e.data.action === 'promote');
  t.deepEqual(promoted.data.participants, [me()]);
  await h.double.groupOps.setSubject(group, 'Erin renamed it', erin);
  t.like((await waitEvent('group.updated', (e) => e.data.chatId === group.jid && e.data.subject === 'Erin renamed it')).data, { by: lidOf(erin) });

  const invite = await api('GET', `/groups/${group.jid}/invite`);
  t.is(invite.status, 200, JSON.stringify(invite.body));
  t.is(invite.body.code, group.inviteCode);
  t.is(invite.body.url, `https://chat.whatsapp.com/${group.inviteCode}`);
  const reset = await api('DELETE', `/groups/${group.jid}/invite`);
  t.not(reset.body.code, invite.body.code);
  t.is(reset.body.code, group.inviteCode);

  const left = await api('POST', `/groups/${group.jid}/leave`);
  t.is(left.status, 200, JSON.stringify(left.body));
  t.false(group.hasAccount(h.double.account()));
  const leftEvent = await waitEvent('group.participants', (e) => e.data.chatId === group.jid && e.data.action === 'remove');
  t.like(leftEvent.data, { participants: [me()], by: me() });
  t.false(((await api('GET', '/groups')).body.groups as Array<{ chatId: string }>).some((g) => g.chatId === group.jid));
  t.is((await api('POST', '/groups/join', { code: invite.body.code })).status, 404, 'the reset code no longer joins');
  const joined = await api('POST', '/groups/join', { code: `https://chat.whatsapp.com/${reset.body.code as string}` });
  t.is(joined.status, 200, JSON.stringify(joined.body));
  t.is(joined.body.chatId, group.jid);
  t.true(group.hasAccount(h.double.account()));
  t.like((await waitEvent('group.joined', (e) => e.data.chatId === group.jid)).data, { by: me() });
});

test.serial('someone adds the account to their group: group.joined and group.participants name who did it; then a subject change', async (t) => {
  const gus = await h.double.contact('+15550100031', { name: 'Gus' });
  const hal = await h.double.contact('+15550100032');
  const group = h.double.group('Gus and friends', [gus, hal], { creator: gus });
  group.removeMember(h.double.account()); // not in it yet
  await h.double.groupOps.add(group, [h.double.account()], gus);
  const joined = await waitEvent('group.joined', (e) => e.data.chatId === group.jid);
  t.deepEqual(joined.data.by, lidOf(gus));
  const added = await waitEvent('group.participants', (e) => e.data.chatId === group.jid && e.data.action === 'add');
  t.deepEqual(added.data.participants, [me()]);
  t.true(((await api('GET', '/groups')).body.groups as Array<{ chatId: string }>).some((g) => g.chatId === group.jid));
  await h.double.groupOps.setDescription(group, 'what we do', gus);
  t.like((await waitEvent('group.updated', (e) => e.data.chatId === group.jid && e.data.description === 'what we do')).data, { by: lidOf(gus) });
});

test.serial('PUT and DELETE /groups/{chatId}/picture: WhatsApp gets a JPEG (Baileys scales the upload), then none', async (t) => {
  const ivy = await h.double.contact('+15550100041');
  const group = h.double.group('Pictures', [ivy]);
  const form = new FormData();
  form.set('file', new Blob([new Uint8Array(randomPng(32))], { type: 'image/png' }), 'logo.png');
  const set = await api('PUT', `/groups/${group.jid}/picture`, undefined, form);
  t.is(set.status, 200, JSON.stringify(set.body));
  t.true(set.body.picture);
  t.truthy(group.picture);
  t.deepEqual([...group.picture!.subarray(0, 3)], [0xff, 0xd8, 0xff], 'a JPEG');
  const removed = await api('DELETE', `/groups/${group.jid}/picture`);
  t.is(removed.status, 200);
  t.is(group.picture, null);
  t.is((await api('PUT', '/groups/120363999999999999@g.us', { subject: 'x' })).status, 404, 'a group WhatsApp does not know');
});
