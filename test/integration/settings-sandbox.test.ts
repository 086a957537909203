/**
 * Guards issue 24, contract part 3 "Instance settings and proxy" (and `calls.autoReject` of "Calls,
 * presence, polls"), on sandbox instances, as integrators see it (GET /sandbox/actions, /sent,
 * events, history): calls.autoReject rejects every call and sends rejectMessage (one credit);
 * autoRead marks what arrives read; ignoreGroups keeps group messages, group events and group
 * chat states out of events (so webhooks, live events and flows) and history, 1:1 traffic and
 * calls untouched; ignoreStatus keeps the receipts and reactions of the account's own status
 * posts out; alwaysOnline shows the account online at every connect and offline when turned off;
 * a proxy on a sandbox is stored and changes nothing.
 */
import test from 'ava';
import type { GatewayEvent } from '../../src/events/types.js';
import { startTestDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';

interface Action {
  action: string;
  chatId: string;
  messageId?: string;
  callId?: string;
  state?: string;
}

function recordEvents(d: TestDaemon): GatewayEvent[] {
  const events: GatewayEvent[] = [];
  d.core.bus.register({ name: 'test', handle: async (e) => void events.push(e) });
  return events;
}

async function sandbox(options: { credits?: number } = {}) {
  const d = await startTestDaemon();
  // The default owner's first instance gets the trial: take it, so the next one pays with credits.
  await d.createInstance({ sandbox: true });
  const inst = await d.connectedSandbox(options.credits !== undefined ? { credits: options.credits } : {});
  const events = recordEvents(d);
  const api = (method: string, path: string, json?: unknown) => d.request(method, `/api/${inst.id}${path}`, { key: inst.key, ...(json !== undefined ? { json } : {}) });
  const settings = async (json: unknown) => {
    const res = await api('PUT', '/settings', json);
    if (res.status !== 200) throw new Error(`PUT /settings: ${res.status} ${JSON.stringify(res.body)}`);
  };
  const actions = async (): Promise<Action[]> => (await api('GET', '/sandbox/actions')).body.actions as Action[];
  return { d, inst, events, api, settings, actions };
}

test('calls.autoReject rejects every offered call (call.received still arrives) and writes rejectMessage to the caller for one credit; off, calls ring', async (t) => {
  const { d, events, api, settings, actions } = await sandbox({ credits: 5 });
  t.teardown(() => d.close());
  await settings({ calls: { autoReject: true, rejectMessage: 'We cannot take calls; please write.' } });
  const call = await api('POST', '/sandbox/call', { from: '+15550300001' });
  const callId = call.body.callId as string;
  await waitFor(async () => (await actions()).find((a) => a.action === 'reject-call' && a.callId === callId), 3000, 'the automatic reject');
  t.true(events.some((e) => e.type === 'call.received' && e.data.callId === callId), 'the event is still published');
  const sent = await waitFor(async () => ((await api('GET', '/sandbox/sent')).body.messages as Array<{ to: string; message?: string }>).find((m) => m.to === '15550300001@s.whatsapp.net'), 3000, 'the reject message');
  t.is(sent.message, 'We cannot take calls; please write.');
  t.is((await api('GET', '/status')).body.quotaRemaining, '4', 'the reject message cost one credit');

  await settings({ calls: { autoReject: false } });
  const ringing = await api('POST', '/sandbox/call', { from: '+15550300002' });
  await waitFor(() => events.some((e) => e.type === 'call.received' && e.data.callId === ringing.body.callId) || undefined, 3000, 'the second call');
  await new Promise((r) => setTimeout(r, 200));
  t.false((await actions()).some((a) => a.callId === ringing.body.callId), 'not rejected');
  t.is((await api('POST', `/calls/${ringing.body.callId as string}/reject`)).status, 200, 'still offered');
});

test('autoRead marks each received message read (1:1 and group) once stored; what the account sent from its phone is not marked; off, nothing is', async (t) => {
  const { d, api, settings, actions } = await sandbox();
  t.teardown(() => d.close());
  const before = await api('POST', '/sandbox/inbound', { from: '+15550300003', message: 'not read' });
  await settings({ autoRead: true });
  const one = await api('POST', '/sandbox/inbound', { from: '+15550300003', message: 'hello' });
  const group = await api('POST', '/sandbox/inbound', { from: '+15550300004', chatId: '120363000000000301@g.us', message: 'hi all' });
  const mine = await api('POST', '/sandbox/outbound', { phone: '+15550300003', message: 'from my phone' });
  const reads = await waitFor(async () => {
    const r = (await actions()).filter((a) => a.action === 'read');
    return r.length >= 2 ? r : null;
  }, 3000, 'two read marks');
  t.deepEqual(
    reads.map((a) => [a.chatId, a.messageId]),
    [
      ['15550300003@s.whatsapp.net', one.body.messageId],
      ['120363000000000301@g.us', group.body.messageId],
    ],
  );
  t.false(reads.some((a) => a.messageId === before.body.messageId || a.messageId === mine.body.messageId));
  await settings({ autoRead: false });
  const after = await api('POST', '/sandbox/inbound', { from: '+15550300003', message: 'later' });
  await new Promise((r) => setTimeout(r, 200));
  t.false((await actions()).some((a) => a.messageId === after.body.messageId));
});

test('ignoreGroups keeps group messages, group events and group chat states out of events and history; 1:1 messages, calls from a group and the statuses of sends to a group still come', async (t) => {
  const { d, events, api, settings } = await sandbox({ credits: 5 });
  t.teardown(() => d.close());
  const GROUP = '120363000000000302@g.us';
  const seen = await api('POST', '/sandbox/inbound', { from: '+15550300005', chatId: GROUP, message: 'before' });
  t.true(events.some((e) => e.type === 'message.received' && e.data.messageId === seen.body.messageId), 'off: a group message is an event');
  await settings({ ignoreGroups: true });
  const count = events.length;

  const hidden = await api('POST', '/sandbox/inbound', { from: '+15550300005', chatId: GROUP, message: 'in the group' });
  t.is(hidden.status, 200);
  const fromPhone = await api('POST', '/sandbox/outbound', { to: GROUP, message: 'mine, in the group' });
  t.is((await api('POST', '/sandbox/group-event', { chatId: GROUP, by: '+15550300005', subject: 'Renamed' })).status, 200);
  t.is((await api('POST', '/sandbox/group-event', { chatId: GROUP, by: '+15550300005', action: 'add', participants: ['+15550300006'] })).status, 200);
  t.is((await api('POST', '/sandbox/presence', { from: '+15550300005', state: 'typing', chatId: GROUP })).status, 200);
  const direct = await api('POST', '/sandbox/inbound', { from: '+15550300005', message: 'just to you' });
  const call = await api('POST', '/sandbox/call', { from: '+15550300005', groupId: GROUP });
  const sent = await api('POST', '/send', { to: GROUP, message: 'to the group' });
  t.is(sent.status, 200, JSON.stringify(sent.body));
  await api('POST', '/sandbox/receipt', { messageId: sent.body.messageId, status: 'delivered' });

  const later = events.slice(count);
  t.deepEqual([...new Set(later.map((e) => e.type))].sort(), ['call.received', 'message.received', 'message.status'], 'no group message, group event or group chat state');
  t.deepEqual(later.filter((e) => e.type === 'message.received').map((e) => e.type === 'message.received' && e.data.messageId), [direct.body.messageId]);
  t.true(later.some((e) => e.type === 'call.received' && e.data.callId === call.body.callId), 'a call rings whatever its group');
  t.true(later.some((e) => e.type === 'message.status' && e.data.messageId === sent.body.messageId && e.data.status === 'delivered'), 'the status of a send to the group');
  for (const id of [hidden.body.messageId as string, fromPhone.body.messageId as string]) {
    t.is((await api('GET', `/messages/${id}`)).status, 404, 'not in history');
  }
  const history = (await api('GET', `/chats/${GROUP}/messages`)).body.messages as Array<{ messageId: string }>;
  t.deepEqual(history.map((m) => m.messageId).sort(), [seen.body.messageId, sent.body.messageId].sort(), 'the group chat holds what came before and what the gateway sent');
});

test('ignoreStatus keeps the receipts and reactions of the account\'s status posts out of events and history; the post itself stays, sent', async (t) => {
  const { d, events, api, settings } = await sandbox({ credits: 5 });
  t.teardown(() => d.close());
  const first = await api('POST', '/status', { text: 'Open today' });
  t.is(first.status, 200, JSON.stringify(first.body));
  await api('POST', '/sandbox/receipt', { messageId: first.body.messageId, status: 'read' });
  t.true(events.some((e) => e.type === 'message.status' && e.data.messageId === first.body.messageId && e.data.status === 'read'), 'off: a viewer\'s receipt is an event');

  await settings({ ignoreStatus: true });
  const post = await api('POST', '/status', { text: 'Closed tomorrow' });
  const count = events.length;
  await api('POST', '/sandbox/receipt', { messageId: post.body.messageId, status: 'read' });
  await api('POST', '/sandbox/react', { messageId: post.body.messageId, emoji: '👍', from: '+15550300007' });
  t.deepEqual(events.slice(count).map((e) => e.type), []);
  const stored = await api('GET', `/messages/${post.body.messageId as string}`);
  t.is(stored.body.status, 'sent', 'the post is in history, its receipt is not');
  // 1:1 traffic is untouched.
  const text = await api('POST', '/send', { phone: '+15550300007', message: 'hi' });
  await api('POST', '/sandbox/receipt', { messageId: text.body.messageId, status: 'read' });
  t.true(events.some((e) => e.type === 'message.status' && e.data.messageId === text.body.messageId && e.data.status === 'read'));
});

test('alwaysOnline: available when turned on and at every connect, unavailable when turned off', async (t) => {
  const { d, api, settings, actions } = await sandbox();
  t.teardown(() => d.close());
  const presence = async (): Promise<string[]> => (await actions()).filter((a) => a.action === 'presence').map((a) => a.state!);
  await settings({ alwaysOnline: true });
  await waitFor(async () => ((await presence()).length === 1 ? true : undefined), 3000, 'available now');
  await api('POST', '/sandbox/disconnect');
  await api('POST', '/sandbox/scan');
  await waitFor(async () => ((await presence()).length === 2 ? true : undefined), 3000, 'available at the connect');
  await settings({ alwaysOnline: true });
  await settings({ alwaysOnline: false });
  await waitFor(async () => ((await presence()).length === 3 ? true : undefined), 3000, 'unavailable');
  await api('POST', '/sandbox/disconnect');
  await api('POST', '/sandbox/scan');
  await new Promise((r) => setTimeout(r, 200));
  t.deepEqual(await presence(), ['available', 'available', 'unavailable'], 'no change, no presence; off, nothing at connect');
});

test('a proxy on a sandbox is stored and shown, and the sandbox keeps working without a socket', async (t) => {
  const { d, inst, api } = await sandbox({ credits: 5 });
  t.teardown(() => d.close());
  const set = await d.request('PUT', `/api/instances/${inst.id}/settings`, { secret: d.secret, json: { proxy: 'socks5://u:p@127.0.0.1:9' } });
  t.is(set.status, 200, JSON.stringify(set.body));
  await api('POST', '/restart');
  await waitFor(async () => ((await api('GET', '/status')).body.status === 'connected' ? true : undefined), 3000, 'connected again');
  t.is((await api('GET', '/settings')).body.proxy, 'socks5://***@127.0.0.1:9');
  t.is((await api('POST', '/send', { phone: '+15550300008', message: 'still works' })).status, 200);
});
