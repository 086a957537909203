/**
 * Guards issue 24, contract part 3 "Groups", on sandbox instances: create (201, a status per
 * participant), PUT settings, participants add/remove/promote/demote with per-participant status,
 * the invite link (GET, DELETE resets it and answers the new one; the old code no longer joins),
 * join, leave, picture; 403 NOT_GROUP_ADMIN where WhatsApp needs an admin; the events group.joined,
 * group.updated and group.participants (also for what /sandbox/group-event plays from the other
 * side); creation and participant changes go through the pacing queue; bad input is a clear 400.
 */
import test from 'ava';
import type { GatewayEvent } from '../../src/events/types.js';
import { fakeFactory } from '../helpers/fake-connection.js';
import { startTestDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';

const ME = { jid: '10000000000@s.whatsapp.net', phone: '+10000000000' };
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

function recordEvents(d: TestDaemon): GatewayEvent[] {
  const events: GatewayEvent[] = [];
  d.core.bus.register({ name: 'test', handle: async (e) => void events.push(e) });
  return events;
}

const of = <T extends GatewayEvent['type']>(events: GatewayEvent[], type: T) => events.filter((e): e is Extract<GatewayEvent, { type: T }> => e.type === type);

test('create, settings, participants, invite, join, leave and picture on a sandbox, each with its event', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const events = recordEvents(d);
  const inst = await d.connectedSandbox();
  const api = (method: string, path: string, json?: unknown, body?: BodyInit) => d.request(method, `/api/${inst.id}${path}`, { key: inst.key, ...(json !== undefined ? { json } : {}), ...(body ? { body } : {}) });

  const created = await api('POST', '/groups', { subject: 'Team', participants: ['+15550000001', '15550000002@s.whatsapp.net', '200000000000003@lid'] });
  t.is(created.status, 201, JSON.stringify(created.body));
  const chatId = created.body.chatId as string;
  t.regex(chatId, /^\d+@g\.us$/);
  t.deepEqual(created.body.participants, [
    { jid: '15550000001@s.whatsapp.net', phone: '+15550000001', status: 'added' },
    { jid: '15550000002@s.whatsapp.net', phone: '+15550000002', status: 'added' },
    { jid: '200000000000003@lid', status: 'added' },
  ]);
  t.like(of(events, 'group.joined')[0]?.data, { chatId, subject: 'Team', by: ME });
  t.deepEqual((await api('GET', '/groups')).body.groups, [{ chatId, subject: 'Team', size: 4 }]);

  const put = await api('PUT', `/groups/${chatId}`, { subject: 'Team EU', description: 'orders', announce: true, locked: true });
  t.is(put.status, 200, JSON.stringify(put.body));
  t.like(put.body, { chatId, subject: 'Team EU', description: 'orders', announce: true, locked: true });
  t.like(of(events, 'group.updated').at(-1)?.data, { chatId, subject: 'Team EU', description: 'orders', announce: true, locked: true, by: ME });
  const info = (await api('GET', `/groups/${chatId}`)).body;
  t.like(info, { subject: 'Team EU', description: 'orders', announce: true, locked: true });
  t.deepEqual(info.participants[0], { ...ME, admin: true });
  t.is((await api('PUT', `/groups/${chatId}`, { description: '' })).status, 200);
  t.is((await api('GET', `/groups/${chatId}`)).body.description, undefined, '"" removes the description');

  const add = await api('POST', `/groups/${chatId}/participants`, { action: 'add', participants: ['+15550000004', '+15550000001'] });
  t.is(add.status, 200, JSON.stringify(add.body));
  t.deepEqual(add.body.participants.map((p: { status: string }) => p.status), ['added', 'already_in_group']);
  t.like(of(events, 'group.participants').at(-1)?.data, { chatId, action: 'add', participants: [{ jid: '15550000004@s.whatsapp.net', phone: '+15550000004' }], by: ME });
  const promote = await api('POST', `/groups/${chatId}/participants`, { action: 'promote', participants: ['+15550000004'] });
  t.is(promote.body.participants[0].status, 'promoted');
  t.true((await api('GET', `/groups/${chatId}`)).body.participants.some((p: { phone?: string; admin: boolean }) => p.phone === '+15550000004' && p.admin));
  t.is((await api('POST', `/groups/${chatId}/participants`, { action: 'demote', participants: ['+15550000004'] })).body.participants[0].status, 'demoted');
  const remove = await api('POST', `/groups/${chatId}/participants`, { action: 'remove', participants: ['+15550000004', '+15559999999'] });
  t.deepEqual(remove.body.participants.map((p: { status: string }) => p.status), ['removed', 'not_in_group']);
  t.deepEqual(of(events, 'group.participants').map((e) => e.data.action), ['add', 'promote', 'demote', 'remove']);

  const invite = await api('GET', `/groups/${chatId}/invite`);
  t.is(invite.status, 200);
  t.is(invite.body.url, `https://chat.whatsapp.com/${invite.body.code as string}`);
  t.is((await api('GET', `/groups/${chatId}/invite`)).body.code, invite.body.code, 'the same link until reset');
  const reset = await api('DELETE', `/groups/${chatId}/invite`);
  t.is(reset.status, 200);
  t.not(reset.body.code, invite.body.code);

  const form = new FormData();
  form.set('file', new Blob([new Uint8Array(PNG)], { type: 'image/png' }), 'pic.png');
  const pic = await api('PUT', `/groups/${chatId}/picture`, undefined, form);
  t.is(pic.status, 200, JSON.stringify(pic.body));
  t.true(pic.body.picture);
  const text = new FormData();
  text.set('file', new Blob(['just text'], { type: 'image/png' }), 'pic.png');
  t.is((await api('PUT', `/groups/${chatId}/picture`, undefined, text)).body.error?.code, 'UNSUPPORTED_MEDIA_TYPE');
  t.false((await api('DELETE', `/groups/${chatId}/picture`)).body.picture);

  t.is((await api('POST', `/groups/${chatId}/leave`)).status, 200);
  t.like(of(events, 'group.participants').at(-1)?.data, { chatId, action: 'remove', participants: [ME], by: ME });
  t.deepEqual((await api('GET', '/groups')).body.groups, []);
  t.is((await api('GET', `/groups/${chatId}`)).status, 404);
  t.is((await api('POST', '/groups/join', { code: invite.body.code })).status, 404, 'the reset code no longer joins');
  const joined = await api('POST', '/groups/join', { code: `https://chat.whatsapp.com/${reset.body.code as string}` });
  t.is(joined.status, 200, JSON.stringify(joined.body));
  t.is(joined.body.chatId, chatId);
  t.is(of(events, 'group.joined').length, 2);
  // Those events also went through the event bus to webhooks: they validate against their schema.
  t.deepEqual((await api('GET', `/groups/${chatId}`)).body.participants.find((p: { jid: string }) => p.jid === ME.jid), { ...ME, admin: false });
});

test('403 NOT_GROUP_ADMIN where WhatsApp needs an admin; what others do to a group (/sandbox/group-event) becomes events', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const events = recordEvents(d);
  const inst = await d.connectedSandbox();
  const api = (method: string, path: string, json?: unknown) => d.request(method, `/api/${inst.id}${path}`, { key: inst.key, ...(json !== undefined ? { json } : {}) });
  const chatId = '120363000000000077@g.us';
  const boss = { jid: '15557777777@s.whatsapp.net', phone: '+15557777777' };

  // Someone adds the account to their group: it joins.
  const played = await api('POST', '/sandbox/group-event', { chatId, by: boss.phone, action: 'add', participants: ['+10000000000', '+15550000008'], subject: 'Their group' });
  t.is(played.status, 200, JSON.stringify(played.body));
  t.like(of(events, 'group.joined')[0]?.data, { chatId, subject: 'Their group', by: boss });
  t.like(of(events, 'group.participants')[0]?.data, { chatId, action: 'add', by: boss, participants: [ME, { jid: '15550000008@s.whatsapp.net', phone: '+15550000008' }] });

  for (const [method, path, json] of [
    ['POST', `/groups/${chatId}/participants`, { action: 'add', participants: ['+15550000009'] }],
    ['PUT', `/groups/${chatId}`, { announce: true }],
    ['GET', `/groups/${chatId}/invite`, undefined],
    ['DELETE', `/groups/${chatId}/invite`, undefined],
  ] as const) {
    const res = await api(method, path, json);
    t.is(res.status, 403, `${method} ${path}`);
    t.is(res.body.error.code, 'NOT_GROUP_ADMIN');
  }
  // An unlocked group's info is anyone's to change; a locked one's is the admins'.
  t.is((await api('PUT', `/groups/${chatId}`, { subject: 'Renamed by a member' })).status, 200);
  await api('POST', '/sandbox/group-event', { chatId, by: boss.phone, locked: true, subject: 'Locked now' });
  t.like(of(events, 'group.updated').at(-1)?.data, { chatId, subject: 'Locked now', locked: true, by: boss });
  t.is((await api('PUT', `/groups/${chatId}`, { subject: 'Again' })).body.error?.code, 'NOT_GROUP_ADMIN');

  // Promoted, the account may.
  await api('POST', '/sandbox/group-event', { chatId, by: boss.phone, action: 'promote', participants: ['+10000000000'] });
  t.like(of(events, 'group.participants').at(-1)?.data, { action: 'promote', participants: [ME], by: boss });
  t.is((await api('PUT', `/groups/${chatId}`, { subject: 'Again' })).status, 200);
  t.is((await api('POST', `/groups/${chatId}/participants`, { action: 'add', participants: ['+15550000009'] })).body.participants?.[0]?.status, 'added');

  // Removed, the account is no longer in it.
  await api('POST', '/sandbox/group-event', { chatId, by: boss.phone, action: 'remove', participants: ['+10000000000'] });
  t.like(of(events, 'group.participants').at(-1)?.data, { action: 'remove', participants: [ME], by: boss });
  t.is((await api('PUT', `/groups/${chatId}`, { subject: 'x' })).status, 404);
});

test('bad input on the group routes is a clear 400; unknown groups 404; a disconnected instance 503', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const inst = await d.connectedSandbox();
  const api = (method: string, path: string, json?: unknown) => d.request(method, `/api/${inst.id}${path}`, { key: inst.key, ...(json !== undefined ? { json } : {}) });
  const g = '120363000000000001@g.us';
  const cases: Array<[string, string, unknown, string, RegExp]> = [
    ['POST', '/groups', { participants: ['+15550000001'] }, 'MISSING_FIELD', /subject/],
    ['POST', '/groups', { subject: 'x', participants: [] }, 'INVALID_FIELD', /participants/],
    ['POST', '/groups', { subject: 'x', participants: ['555'] }, 'INVALID_FIELD', /participants/],
    ['POST', '/groups', { subject: 'x', participants: ['120363000000000001@g.us'] }, 'INVALID_FIELD', /participants/],
    ['POST', '/groups', { subject: 'x'.repeat(101), participants: ['+15550000001'] }, 'INVALID_FIELD', /subject/],
    ['POST', '/groups', { subject: 'x', participants: ['+15550000001'], admins: [] }, 'INVALID_FIELD', /admins: unknown field/],
    ['PUT', `/groups/${g}`, {}, 'MISSING_FIELD', /at least one/],
    ['PUT', '/groups/15551234567@s.whatsapp.net', { subject: 'x' }, 'INVALID_FIELD', /chatId/],
    ['POST', `/groups/${g}/participants`, { action: 'kick', participants: ['+15550000001'] }, 'INVALID_FIELD', /action/],
    ['POST', '/groups/join', { code: 'not a code!' }, 'INVALID_FIELD', /code/],
    ['POST', '/sandbox/group-event', { chatId: g, action: 'add' }, 'MISSING_FIELD', /together/],
    ['POST', '/sandbox/group-event', { chatId: g }, 'MISSING_FIELD', /subject/],
  ];
  for (const [method, path, json, code, message] of cases) {
    const res = await api(method, path, json);
    t.is(res.status, 400, `${method} ${path} ${JSON.stringify(json)}: ${JSON.stringify(res.body)}`);
    t.is(res.body.error.code, code, `${method} ${path} ${JSON.stringify(json)}`);
    t.regex(res.body.error.message, message);
  }
  for (const [method, path, json] of [
    ['PUT', `/groups/${g}`, { subject: 'x' }],
    ['POST', `/groups/${g}/participants`, { action: 'add', participants: ['+15550000001'] }],
    ['GET', `/groups/${g}/invite`, undefined],
    ['POST', `/groups/${g}/leave`, undefined],
    ['DELETE', `/groups/${g}/picture`, undefined],
    ['POST', '/groups/join', { code: 'AAAAAAAAAAAAAAAAAAAAAA' }],
  ] as const) {
    const res = await api(method, path, json);
    t.is(res.status, 404, `${method} ${path}`);
    t.is(res.body.error.code, 'NOT_FOUND');
  }
  await api('POST', '/sandbox/disconnect');
  const res = await api('POST', '/groups', { subject: 'x', participants: ['+15550000001'] });
  t.is(res.status, 503);
  t.is(res.body.error.code, 'CONNECTION_NOT_READY');
});

test('creating a group and changing participants wait their turn in the pacing queue (a burst is 429); settings do not', async (t) => {
  const fakes = fakeFactory();
  // One paced action per 60 s, and nothing may wait more than 1 s: a second paced action at once is refused.
  const d = await startTestDaemon({ whatsapp: fakes.factory, config: { sending: { minIntervalMs: 60_000, jitterMs: 0, maxWaitMs: 1000 } } });
  t.teardown(() => d.close());
  const inst = await d.createInstance({ sandbox: false });
  await waitFor(() => fakes.made.get(inst.id), 3000, 'the connection');
  fakes.made.get(inst.id)!.set('connected');
  const api = (method: string, path: string, json?: unknown) => d.request(method, `/api/${inst.id}${path}`, { key: inst.key, ...(json !== undefined ? { json } : {}) });
  const g = '120363000000000001@g.us';
  t.is((await api('POST', '/groups', { subject: 'one', participants: ['+15550000001'] })).status, 201);
  const second = await api('POST', '/groups', { subject: 'two', participants: ['+15550000001'] });
  t.is(second.status, 429, JSON.stringify(second.body));
  t.is(second.body.error.code, 'RATE_LIMITED');
  t.truthy(second.headers.get('retry-after'));
  t.is((await api('POST', `/groups/${g}/participants`, { action: 'add', participants: ['+15550000002'] })).status, 429);
  t.is((await api('POST', '/groups/join', { code: 'AAAAAAAAAAAAAAAAAAAAAA' })).status, 429);
  t.is((await api('PUT', `/groups/${g}`, { subject: 'free' })).status, 200, 'settings are not paced');
  t.deepEqual(fakes.made.get(inst.id)!.actions.map((a) => a.action), ['create-group', 'update-group']);
});
