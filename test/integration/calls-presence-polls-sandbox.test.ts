/**
 * Guards issue 24, contract part 3 "Calls, presence, polls", on sandbox instances: call.received
 * and POST /calls/{callId}/reject (404 NOT_FOUND for an unknown call); the reject hook the
 * `calls.autoReject` setting uses (reject, then the reject message: one credit through the send
 * service); POST /presence takes every state and each reaches the other side as itself;
 * POST /presence/subscribe; presence.updated; poll.vote and the votes on GET /messages/{id}, kept
 * across a restart.
 */
import test from 'ava';
import { rm } from 'node:fs/promises';
import { autoRejectConsumer, rejectCall } from '../../src/calls/feature.js';
import type { GatewayEvent } from '../../src/events/types.js';
import { prepareDataDir, startTestDaemon, tempDir, waitFor, type TestDaemon } from '../helpers/daemon.js';

function recordEvents(d: TestDaemon): GatewayEvent[] {
  const events: GatewayEvent[] = [];
  d.core.bus.register({ name: 'test', handle: async (e) => void events.push(e) });
  return events;
}
const of = <T extends GatewayEvent['type']>(events: GatewayEvent[], type: T) => events.filter((e): e is Extract<GatewayEvent, { type: T }> => e.type === type);

test('a call is offered (call.received), rejected once (then 404), and every kind says what it is', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const events = recordEvents(d);
  const inst = await d.connectedSandbox();
  const api = (method: string, path: string, json?: unknown) => d.request(method, `/api/${inst.id}${path}`, { key: inst.key, ...(json !== undefined ? { json } : {}) });

  const voice = await api('POST', '/sandbox/call', { from: '+15550000001' });
  t.is(voice.status, 200, JSON.stringify(voice.body));
  const video = await api('POST', '/sandbox/call', { from: '+15550000002', video: true, groupId: '120363000000000001@g.us' });
  const calls = of(events, 'call.received').map((e) => e.data);
  t.like(calls[0], { callId: voice.body.callId, chatId: '15550000001@s.whatsapp.net', from: '+15550000001', sender: '15550000001@s.whatsapp.net', isVideo: false, isGroup: false });
  t.like(calls[1], { callId: video.body.callId, chatId: '120363000000000001@g.us', from: '+15550000002', isVideo: true, isGroup: true });

  const rejected = await api('POST', `/calls/${voice.body.callId as string}/reject`);
  t.is(rejected.status, 200, JSON.stringify(rejected.body));
  t.like(rejected.body, { callId: voice.body.callId, rejected: true });
  const again = await api('POST', `/calls/${voice.body.callId as string}/reject`);
  t.is(again.status, 404);
  t.is(again.body.error.code, 'NOT_FOUND');
  t.is((await api('POST', '/calls/NOSUCHCALL/reject')).body.error.code, 'NOT_FOUND');
  const actions = (await api('GET', '/sandbox/actions')).body.actions as Array<{ action: string; callId?: string; chatId: string }>;
  t.like(actions.find((a) => a.action === 'reject-call'), { callId: voice.body.callId, chatId: '15550000001@s.whatsapp.net' });
});

test('the reject hook for calls.autoReject: the call is rejected, then the reject message costs one credit like a text', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  // The default owner's first instance gets the trial: take it, so the next one pays with credits.
  await d.createInstance({ sandbox: true });
  const inst = await d.connectedSandbox({ credits: 2 });
  const api = (method: string, path: string, json?: unknown) => d.request(method, `/api/${inst.id}${path}`, { key: inst.key, ...(json !== undefined ? { json } : {}) });
  const events = recordEvents(d);

  // Called directly, as the settings code does for one call.
  const offered = await api('POST', '/sandbox/call', { from: '+15550000003' });
  const call = of(events, 'call.received')[0]!.data;
  t.is(call.callId, offered.body.callId);
  const done = await rejectCall({ sender: d.core.sender }, inst.id, call, 'Sorry, we cannot take calls; please write.');
  t.true(done.rejected);
  t.truthy(done.messageId);
  const sent = (await api('GET', '/sandbox/sent')).body.messages as Array<{ messageId: string; to: string; message: string }>;
  t.like(sent.at(-1), { messageId: done.messageId, to: '15550000003@s.whatsapp.net', message: 'Sorry, we cannot take calls; please write.' });
  t.is((await api('GET', '/status')).body.quotaRemaining, '1', 'the message cost one credit');

  // As an event consumer: every call of an instance whose setting says so.
  d.core.bus.register(autoRejectConsumer({ sender: d.core.sender, logger: d.core.logger, setting: (id) => (id === inst.id ? { autoReject: true } : null) }));
  const second = await api('POST', '/sandbox/call', { from: '+15550000004', video: true });
  await waitFor(async () => ((await api('GET', '/sandbox/actions')).body.actions as Array<{ callId?: string }>).some((a) => a.callId === second.body.callId), 3000, 'the auto-reject');
  t.is((await api('GET', '/status')).body.quotaRemaining, '1', 'no message, no credit');
  t.is((await api('POST', `/calls/${second.body.callId as string}/reject`)).status, 404, 'already rejected');
});

test('POST /presence takes every state and records each as itself; /presence/subscribe; /sandbox/presence becomes presence.updated', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const events = recordEvents(d);
  const inst = await d.connectedSandbox();
  const api = (method: string, path: string, json?: unknown) => d.request(method, `/api/${inst.id}${path}`, { key: inst.key, ...(json !== undefined ? { json } : {}) });
  const chatId = '15550000005@s.whatsapp.net';
  for (const state of ['typing', 'recording', 'paused', 'available', 'unavailable']) {
    const res = await api('POST', '/presence', { chatId, state });
    t.is(res.status, 200, `${state}: ${JSON.stringify(res.body)}`);
  }
  t.is((await api('POST', '/presence', { chatId, state: 'composing' })).body.error?.code, 'INVALID_FIELD');
  t.is((await api('POST', '/presence/subscribe', { chatId })).status, 200);
  t.is((await api('POST', '/presence/subscribe', { chatId: 'nobody' })).body.error?.code, 'INVALID_FIELD');
  const actions = (await api('GET', '/sandbox/actions')).body.actions as Array<{ action: string; state?: string; chatId: string }>;
  t.deepEqual(
    actions.map((a) => (a.action === 'presence' ? a.state : a.action)),
    ['typing', 'recording', 'paused', 'available', 'unavailable', 'subscribe'],
  );

  await api('POST', '/sandbox/presence', { from: '+15550000005', state: 'typing' });
  await api('POST', '/sandbox/presence', { from: '+15550000005', state: 'unavailable', lastSeen: '2026-01-01T10:00:00.000Z' });
  await api('POST', '/sandbox/presence', { from: '+15550000006', state: 'recording', chatId: '120363000000000001@g.us' });
  t.deepEqual(
    of(events, 'presence.updated').map((e) => e.data),
    [
      { chatId, from: '+15550000005', sender: chatId, state: 'typing' },
      { chatId, from: '+15550000005', sender: chatId, state: 'unavailable', lastSeen: '2026-01-01T10:00:00.000Z' },
      { chatId: '120363000000000001@g.us', from: '+15550000006', sender: '15550000006@s.whatsapp.net', state: 'recording' },
    ],
  );
});

test('votes on a poll: poll.vote per vote (a changed vote replaces the earlier one), GET shows who picked what, also after a restart', async (t) => {
  const dataDir = await tempDir();
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const secret = await prepareDataDir(dataDir);
  let d = await startTestDaemon({ dataDir });
  const events = recordEvents(d);
  const created = await d.request('POST', '/api/instances/create', { secret, json: { sandbox: true, premiumDays: 30 } });
  const inst = { id: created.body.instanceId as string, key: created.body.apiKey as string };
  await d.request('POST', `/api/${inst.id}/sandbox/scan`, { key: inst.key });
  const api = (method: string, path: string, json?: unknown) => d.request(method, `/api/${inst.id}${path}`, { key: inst.key, ...(json !== undefined ? { json } : {}) });
  const poll = await api('POST', '/send-poll', { phone: '+15550000007', question: 'Lunch?', options: ['Pizza', 'Sushi', 'Salad'], multiple: true });
  t.is(poll.status, 200);
  const messageId = poll.body.messageId as string;
  const vote = (from: string, selected: string[]) => api('POST', '/sandbox/vote', { messageId, from, selected });
  t.is((await vote('+15550000007', ['Pizza'])).status, 200);
  await vote('+15550000008', ['Pizza', 'Sushi']);
  await vote('+15550000007', ['Sushi']);
  t.deepEqual(
    of(events, 'poll.vote').map((e) => ({ ...e.data, timestamp: undefined })),
    [
      { chatId: '15550000007@s.whatsapp.net', pollMessageId: messageId, voter: { jid: '15550000007@s.whatsapp.net', phone: '+15550000007' }, selected: ['Pizza'], timestamp: undefined },
      { chatId: '15550000007@s.whatsapp.net', pollMessageId: messageId, voter: { jid: '15550000008@s.whatsapp.net', phone: '+15550000008' }, selected: ['Pizza', 'Sushi'], timestamp: undefined },
      { chatId: '15550000007@s.whatsapp.net', pollMessageId: messageId, voter: { jid: '15550000007@s.whatsapp.net', phone: '+15550000007' }, selected: ['Sushi'], timestamp: undefined },
    ],
  );
  const expected = {
    Pizza: [{ jid: '15550000008@s.whatsapp.net', phone: '+15550000008' }],
    Sushi: [
      { jid: '15550000007@s.whatsapp.net', phone: '+15550000007' },
      { jid: '15550000008@s.whatsapp.net', phone: '+15550000008' },
    ],
    Salad: [],
  };
  const sortVoters = (v: Record<string, Array<{ jid: string }>>) => Object.fromEntries(Object.entries(v).map(([k, list]) => [k, [...list].sort((a, b) => a.jid.localeCompare(b.jid))]));
  t.deepEqual(sortVoters((await api('GET', `/messages/${messageId}`)).body.votes), expected);

  t.is((await api('POST', '/sandbox/vote', { messageId: 'NOSUCHPOLL', from: '+15550000007', selected: ['Pizza'] })).status, 404);
  t.is((await vote('+15550000007', ['Pasta'])).body.error?.code, 'INVALID_FIELD');
  const single = await api('POST', '/send-poll', { phone: '+15550000007', question: 'One?', options: ['a', 'b'] });
  t.is((await api('POST', '/sandbox/vote', { messageId: single.body.messageId, from: '+15550000007', selected: ['a', 'b'] })).body.error?.code, 'INVALID_FIELD');
  t.deepEqual((await api('GET', `/messages/${single.body.messageId as string}`)).body.votes, { a: [], b: [] }, 'a poll nobody voted on shows every option, empty');

  await d.close();
  d = await startTestDaemon({ dataDir });
  t.teardown(() => d.close());
  t.deepEqual(sortVoters((await d.request('GET', `/api/${inst.id}/messages/${messageId}`, { key: inst.key })).body.votes), expected, 'votes are durable');
});
