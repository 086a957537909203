/**
 * Guards issue 12, "Exit codes and output" and "clear 400s": bad input gets a clear 4xx with the
 * contract's error body, never a 500 or a misleading message, and changes nothing.
 */
import test from 'ava';
import { startTestDaemon } from '../helpers/daemon.js';

test('premium of 99,999,999 days is a 400 naming the field, not "Invalid time value"', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const { id } = await d.createInstance({ sandbox: true, owner: 'o1' });
  const before = await d.request('GET', `/api/instances/${id}`, { secret: d.secret });
  const res = await d.request('POST', `/api/instances/${id}/premium`, { secret: d.secret, json: { days: 99_999_999 } });
  t.is(res.status, 400);
  t.is(res.body.success, false);
  t.is(res.body.error.code, 'INVALID_FIELD');
  t.regex(res.body.error.message, /days/);
  t.notRegex(res.body.error.message, /Invalid time value/);
  const after = await d.request('GET', `/api/instances/${id}`, { secret: d.secret });
  // (the connection status moves on by itself; the plan must not)
  t.deepEqual([after.body.premiumUntil, after.body.credits], [before.body.premiumUntil, before.body.credits], 'nothing changed');
  const ok = await d.request('POST', `/api/instances/${id}/premium`, { secret: d.secret, json: { days: 36_500 } });
  t.is(ok.status, 200);
});

test('create with an unknown field ({"nmae": "x"}) is a 400 naming it, and creates nothing', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const res = await d.request('POST', '/api/instances/create', { secret: d.secret, json: { nmae: 'x' } });
  t.is(res.status, 400);
  t.is(res.body.error.code, 'INVALID_FIELD');
  t.regex(res.body.error.message, /nmae/);
  const list = await d.request('GET', '/api/instances', { secret: d.secret });
  t.is(list.status, 200);
  t.is(list.body.instances.length, 0);
});

test('send-media with too many form fields is a clear 4xx about the fields, not about the file size', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const { id, key } = await d.connectedSandbox();
  const form = new FormData();
  form.append('phone', '+15551234567');
  for (let i = 0; i < 40; i++) form.append(`extra${i}`, 'x');
  form.append('file', new Blob([new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])]), 'a.png');
  const res = await d.request('POST', `/api/${id}/send-media`, { key, body: form });
  t.true(res.status === 400 || res.status === 413, `status ${res.status}`);
  t.is(res.body.success, false);
  t.notRegex(res.body.error.message, /larger than media\.maxBytes/);
  t.regex(res.body.error.message, /field/i);
  const sent = await d.request('GET', `/api/${id}/sandbox/sent`, { key });
  t.is(sent.body.messages.length, 0, 'nothing was sent');
});

// Guards DESIGN.md part 3 ("unknown body fields are 400") on routes that take no body.
test('a route that takes no body refuses one with fields (400 naming it) and does nothing; {} and no body are fine', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const { id, key } = await d.createInstance({ sandbox: true, premiumDays: 30 });
  await d.request('POST', `/api/${id}/sandbox/scan`, { key });
  await d.request('POST', `/api/${id}/sandbox/inbound`, { key, json: { from: '+15550001111', message: 'hi' } });
  const chat = '15550001111@s.whatsapp.net';
  const refused = await d.request('POST', `/api/${id}/chats/${chat}/unread`, { key, json: { unread: false } });
  t.is(refused.status, 400);
  t.is(refused.body.error.code, 'INVALID_FIELD');
  t.regex(refused.body.error.message, /^unread: unknown field/);
  const actions = async () => ((await d.request('GET', `/api/${id}/sandbox/actions`, { key })).body.actions as Array<{ action: string }>).map((a) => a.action);
  t.false((await actions()).includes('unread'), 'nothing was done');
  t.is((await d.request('POST', `/api/${id}/chats/${chat}/unread`, { key, json: {} })).status, 200);
  t.is((await d.request('POST', `/api/${id}/chats/${chat}/unread`, { key })).status, 200);
  t.is((await d.request('DELETE', `/api/${id}/webhook`, { key, json: { really: true } })).status, 400);
});
