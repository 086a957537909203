/**
 * Guards issue 24, contract part 3 "Calls, presence, polls", through real Baileys on the protocol
 * double (an in-process daemon): call offers (voice, video, group; a LID caller) become
 * call.received and POST /calls/{callId}/reject reaches WhatsApp (404 once over); a group call
 * is no message.received. Every POST /presence state reaches the contact as itself (composing,
 * composing media=audio, paused, available, unavailable); /presence/subscribe is answered, and the
 * contact's presence and chat states become presence.updated. Votes, encrypted as WhatsApp does,
 * become poll.vote and GET /messages/{id} votes: on a poll the gateway sent (1:1 and in a group,
 * also after a restart, from the stored secret) and on a poll a member sent.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { DEFAULT_CONNECTION_CONFIG } from '@whiskeysockets/baileys';
import type { GatewayEvent } from '../../src/events/types.js';
import { waitFor } from '../helpers/daemon.js';
import { startDoubleDaemon, type DoubleDaemon } from '../protocol-double/harness.js';
import { encryptVote, vote } from '../protocol-double/polls.js';

// Baileys never clears the timers of queries pending when a socket ends (60 s by default).
DEFAULT_CONNECTION_CONFIG.defaultQueryTimeoutMs = 5000;

let h: DoubleDaemon;
let inst: { id: string; key: string };
const events: GatewayEvent[] = [];
const follow = () => h.d.core.bus.register({ name: 'test', handle: async (e) => void events.push(e) });

test.before(async () => {
  h = await startDoubleDaemon({ config: { sending: { minIntervalMs: 0, jitterMs: 0 } } });
  follow();
  inst = await h.pairedInstance();
});

test.after.always(async () => {
  await h?.close();
});

test.afterEach.always((t) => {
  t.deepEqual(h.double.errors, [], 'nothing the double could not decrypt, no nack');
});

const api = (method: string, path: string, json?: unknown) => h.d.request(method, `/api/${inst.id}${path}`, { key: inst.key, ...(json !== undefined ? { json } : {}) });
function waitEvent<T extends GatewayEvent['type']>(type: T, match: (e: Extract<GatewayEvent, { type: T }>) => boolean): Promise<Extract<GatewayEvent, { type: T }>> {
  return waitFor(() => events.find((e): e is Extract<GatewayEvent, { type: T }> => e.type === type && match(e as Extract<GatewayEvent, { type: T }>)), 10_000, `a ${type} event`);
}

test.serial('calls: voice, video (a LID caller) and group offers become call.received; a reject reaches WhatsApp; an unknown or finished call is 404', async (t) => {
  const alice = await h.double.contact('+15550200001', { name: 'Alice' });
  const bob = await h.double.contact('+15550200002', { name: 'Bob', addressing: 'lid' });
  const voiceId = h.double.callOps.offer(alice);
  const voice = await waitEvent('call.received', (e) => e.data.callId === voiceId);
  t.like(voice.data, { chatId: alice.jid, from: alice.phone, sender: alice.jid, isVideo: false, isGroup: false });

  const rejected = await api('POST', `/calls/${voiceId}/reject`);
  t.is(rejected.status, 200, JSON.stringify(rejected.body));
  const reject = await waitFor(() => h.double.callOps.rejects.find((r) => r.callId === voiceId), 5000, 'the reject at the double');
  t.is(reject.callCreator, alice.jid);
  t.is(reject.to, alice.jid);
  t.is((await api('POST', `/calls/${voiceId}/reject`)).status, 404, 'already rejected');
  t.is((await api('POST', '/calls/0123456789ABCDEF0123456789ABCDEF/reject')).body.error?.code, 'NOT_FOUND');

  const videoId = h.double.callOps.offer(bob, { video: true });
  const video = await waitEvent('call.received', (e) => e.data.callId === videoId);
  t.like(video.data, { chatId: bob.jid, from: bob.phone, sender: bob.lid, isVideo: true, isGroup: false });

  const group = h.double.group('Callers', [alice, bob]);
  const groupId = h.double.callOps.offer(alice, { group });
  t.like((await waitEvent('call.received', (e) => e.data.callId === groupId)).data, { chatId: group.jid, from: alice.phone, isGroup: true });
  t.is((await api('POST', `/calls/${groupId}/reject`)).status, 200);
  await waitFor(() => h.double.callOps.rejects.some((r) => r.callId === groupId), 5000, 'the group call reject');
  // Baileys makes a placeholder message of a group call offer (skipped: it has no content): not a message anyone wrote.
  await waitFor(() => h.double.pending().length === 0, 5000, 'everything acknowledged');
  t.false(events.some((e) => e.type === 'message.received' && e.data.messageId === groupId));
});

test.serial('presence: each POST /presence state reaches the contact as itself; a subscription is answered and followed; chat states become presence.updated', async (t) => {
  const cleo = await h.double.contact('+15550200003', { name: 'Cleo' });
  const seenBefore = h.double.presenceOps.seen(cleo).length;
  for (const state of ['typing', 'recording', 'paused', 'available', 'unavailable']) {
    const res = await api('POST', '/presence', { chatId: cleo.jid, state });
    t.is(res.status, 200, `${state}: ${JSON.stringify(res.body)}`);
  }
  const seen = await waitFor(() => {
    const s = h.double.presenceOps.seen(cleo).slice(seenBefore);
    return s.length >= 5 ? s : null;
  }, 5000, 'what Cleo saw');
  t.deepEqual(seen, [{ state: 'composing' }, { state: 'composing', media: 'audio' }, { state: 'paused' }, { state: 'available' }, { state: 'unavailable' }]);

  t.is((await api('POST', '/presence/subscribe', { chatId: cleo.jid })).status, 200);
  await waitFor(() => h.double.presenceOps.subscribed.includes(cleo.jid), 5000, 'the subscription');
  // WhatsApp answers a subscription with the presence now: offline.
  t.like((await waitEvent('presence.updated', (e) => e.data.sender === cleo.jid && e.data.state === 'unavailable')).data, { chatId: cleo.jid, from: cleo.phone });
  h.double.presenceOps.set(cleo, true);
  await waitEvent('presence.updated', (e) => e.data.sender === cleo.jid && e.data.state === 'available');
  h.double.presenceOps.set(cleo, false, new Date('2026-02-03T04:05:06Z'));
  await waitEvent('presence.updated', (e) => e.data.sender === cleo.jid && e.data.lastSeen === '2026-02-03T04:05:06.000Z');

  h.double.presenceOps.type(cleo, 'composing');
  await waitEvent('presence.updated', (e) => e.data.sender === cleo.jid && e.data.state === 'typing');
  h.double.presenceOps.type(cleo, 'recording');
  await waitEvent('presence.updated', (e) => e.data.sender === cleo.jid && e.data.state === 'recording');
  h.double.presenceOps.type(cleo, 'paused');
  const paused = await waitEvent('presence.updated', (e) => e.data.sender === cleo.jid && e.data.state === 'paused');
  t.deepEqual(paused.data, { chatId: cleo.jid, from: cleo.phone, sender: cleo.jid, state: 'paused' });

  const dan = await h.double.contact('+15550200004', { addressing: 'lid' });
  const group = h.double.group('Typists', [cleo, dan]);
  // Baileys learns Dan's number from his first group message (participant_pn), as from WhatsApp.
  const hello = await dan.sendText(group.jid, 'hello');
  await waitEvent('message.received', (e) => e.data.messageId === hello);
  h.double.presenceOps.type(dan, 'composing', { group });
  t.deepEqual((await waitEvent('presence.updated', (e) => e.data.chatId === group.jid)).data, { chatId: group.jid, from: dan.phone, sender: dan.lid, state: 'typing' });
});

test.serial('poll votes (encrypted as WhatsApp does) become poll.vote; GET shows who picked what; a changed vote replaces the earlier one; after a restart the stored secret decrypts them', async (t) => {
  const eve = await h.double.contact('+15550200005', { name: 'Eve' });
  const fay = await h.double.contact('+15550200006', { name: 'Fay', addressing: 'lid' });
  const sent = await api('POST', '/send-poll', { phone: eve.phone, question: 'Lunch?', options: ['Pizza', 'Sushi', 'Salad'], multiple: true });
  t.is(sent.status, 200, JSON.stringify(sent.body));
  const pollId = sent.body.messageId as string;
  const poll = await eve.nextMessage();
  t.is(poll.id, pollId);
  t.is(poll.message.pollCreationMessage?.name ?? poll.message.pollCreationMessageV3?.name, 'Lunch?');

  await vote(eve, poll, ['Pizza', 'Sushi']);
  const first = await waitEvent('poll.vote', (e) => e.data.pollMessageId === pollId);
  t.like(first.data, { chatId: eve.jid, voter: { jid: eve.jid, phone: eve.phone }, selected: ['Pizza', 'Sushi'] });
  await vote(eve, poll, ['Salad']);
  await waitEvent('poll.vote', (e) => e.data.pollMessageId === pollId && e.data.selected[0] === 'Salad');
  t.deepEqual((await api('GET', `/messages/${pollId}`)).body.votes, { Pizza: [], Sushi: [], Salad: [{ jid: eve.jid, phone: eve.phone }] });

  // In a LID group, two members vote.
  const group = h.double.group('Lunch club', [eve, fay]);
  const inGroup = await api('POST', '/send-poll', { to: group.jid, question: 'Where?', options: ['Here', 'There'] });
  const groupPollId = inGroup.body.messageId as string;
  const [eveCopy, fayCopy] = await Promise.all([waitFor(() => eve.messages.find((m) => m.id === groupPollId), 10_000, 'Eve got it'), waitFor(() => fay.messages.find((m) => m.id === groupPollId), 10_000, 'Fay got it')]);
  await vote(eve, eveCopy, ['Here'], group);
  await vote(fay, fayCopy, ['There'], group);
  await waitFor(() => events.filter((e) => e.type === 'poll.vote' && e.data.pollMessageId === groupPollId).length === 2 || undefined, 10_000, 'two votes');
  const votes = (await api('GET', `/messages/${groupPollId}`)).body.votes as Record<string, Array<{ jid: string; phone?: string }>>;
  t.deepEqual(votes, { Here: [{ jid: eve.lid, phone: eve.phone }], There: [{ jid: fay.lid, phone: fay.phone }] });

  // After a restart the poll is no longer in memory: its secret comes from the message store.
  await h.restart();
  follow();
  await h.waitStatus(inst.id, inst.key, 'connected');
  await vote(eve, poll, ['Sushi']);
  await waitEvent('poll.vote', (e) => e.data.pollMessageId === pollId && e.data.selected[0] === 'Sushi');
  t.deepEqual((await api('GET', `/messages/${pollId}`)).body.votes, { Pizza: [], Sushi: [{ jid: eve.jid, phone: eve.phone }], Salad: [] });
});

test.serial("a member's poll in a group: its secret is kept from its message, and another member's vote on it is decrypted", async (t) => {
  const gil = await h.double.contact('+15550200007', { name: 'Gil' });
  const hoa = await h.double.contact('+15550200008', { name: 'Hoa' });
  const group = h.double.group('Their poll', [gil, hoa]);
  const secret = randomBytes(32);
  const pollId = await gil.send(
    group.jid,
    { pollCreationMessage: { name: 'Tea or coffee?', options: [{ optionName: 'Tea' }, { optionName: 'Coffee' }], selectableOptionsCount: 1 }, messageContextInfo: { messageSecret: secret } },
    { type: 'poll' },
  );
  t.like((await waitEvent('message.received', (e) => e.data.messageId === pollId)).data, { type: 'poll', poll: { question: 'Tea or coffee?', options: ['Tea', 'Coffee'], multiple: false } });
  const encrypted = encryptVote({ secret, pollId, creatorJid: gil.lid, voterJid: hoa.lid, options: ['Coffee'] });
  await hoa.send(group.jid, { pollUpdateMessage: { pollCreationMessageKey: { remoteJid: group.jid, fromMe: false, id: pollId, participant: gil.lid }, vote: encrypted, senderTimestampMs: Date.now() } }, { type: 'poll' });
  const voted = await waitEvent('poll.vote', (e) => e.data.pollMessageId === pollId);
  t.like(voted.data, { chatId: group.jid, voter: { jid: hoa.lid, phone: hoa.phone }, selected: ['Coffee'] });
  t.deepEqual((await api('GET', `/messages/${pollId}`)).body.votes, { Tea: [], Coffee: [{ jid: hoa.lid, phone: hoa.phone }] });
});
