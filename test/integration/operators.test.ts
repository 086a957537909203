/**
 * Guards issue 25, "operators with their own accounts" (contract part 3, "Plans, operators and
 * audit"): operators managed over REST with the server secret (one-time password, scrypt hash at
 * rest), signed in through the panel's session route; an agent reaches the inbox, chats and
 * read-only status of its own instances only (401 elsewhere, admin routes included); an admin
 * operator reaches everything; a reset or a removal ends their sessions; sessions are bounded per
 * operator.
 */
import test from 'ava';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MAX_SESSIONS_PER_PRINCIPAL } from '../../src/panel/sessions.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';

interface Signed {
  cookie: string;
  csrf: string;
  body: Record<string, unknown>;
}

async function signIn(d: TestDaemon, body: unknown): Promise<Signed> {
  const res = await d.request('POST', '/panel/api/session', { json: body });
  if (res.status !== 201) throw new Error(`sign-in ${res.status} ${JSON.stringify(res.body)}`);
  return { cookie: (res.headers.get('set-cookie') ?? '').split(';')[0]!, csrf: res.body.csrfToken as string, body: res.body };
}
const as = (s: Signed) => ({ headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } });

test('operators over REST: add (one-time password, scrypt at rest), list without hashes, errors, reset, remove', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const a = await d.createInstance({ sandbox: true, name: 'shop' });
  const added = await d.request('POST', '/api/operators', { secret: d.secret, json: { name: 'bob', role: 'agent', instances: [a.id] } });
  t.is(added.status, 201);
  t.like(added.body, { success: true, name: 'bob', role: 'agent', instances: [a.id] });
  t.regex(added.body.password, /^[A-Za-z0-9_-]{24}$/);
  const admin = await d.request('POST', '/api/operators', { secret: d.secret, json: { name: 'ann', role: 'admin' } });
  t.is(admin.status, 201);

  // At rest: a scrypt hash with a salt of its own, never the password.
  const file = await readFile(join(d.dataDir, 'operators.json'), 'utf8');
  t.false(file.includes(added.body.password));
  const hashes = (JSON.parse(file) as { operators: Array<{ passwordHash: string }> }).operators.map((o) => o.passwordHash);
  t.true(hashes.every((h) => /^scrypt\$16384\$8\$1\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/.test(h)));
  t.not(hashes[0]!.split('$')[4], hashes[1]!.split('$')[4], 'a salt per password');

  const list = await d.request('GET', '/api/operators', { secret: d.secret });
  t.deepEqual(list.body.operators.map((o: { name: string }) => o.name), ['ann', 'bob']);
  t.notRegex(JSON.stringify(list.body), /scrypt|"password(Hash)?"/);

  t.is((await d.request('POST', '/api/operators', { secret: d.secret, json: { name: 'bob', role: 'agent' } })).body.error.code, 'ALREADY_EXISTS');
  t.is((await d.request('POST', '/api/operators', { secret: d.secret, json: { name: 'cy', role: 'agent', instances: ['inst_doesnotexist'] } })).body.error.code, 'INVALID_FIELD');
  t.is((await d.request('POST', '/api/operators', { secret: d.secret, json: { name: 'cy', role: 'admin', instances: [a.id] } })).body.error.code, 'INVALID_FIELD');
  t.is((await d.request('POST', '/api/operators', { secret: d.secret, json: { name: 'no spaces', role: 'agent' } })).body.error.code, 'INVALID_FIELD');
  t.is((await d.request('POST', '/api/operators', { secret: d.secret, json: { name: 'cy', role: 'boss' } })).status, 400);
  t.is((await d.request('POST', '/api/operators', { secret: d.secret, json: { name: 'cy', role: 'agent', extra: 1 } })).status, 400);
  t.is((await d.request('POST', '/api/operators', { key: a.key, json: { name: 'cy', role: 'agent' } })).status, 401);
  t.is((await d.request('GET', '/api/operators')).status, 401);

  // Sign in, reset (the old password and its session stop), remove (the new one stops too).
  const bob = await signIn(d, { operator: 'bob', password: added.body.password });
  t.like(bob.body, { role: 'agent', operator: 'bob', instanceId: null, instances: [{ instanceId: a.id, name: 'shop' }] });
  const reset = await d.request('POST', '/api/operators/bob/reset', { secret: d.secret });
  t.is(reset.status, 200);
  t.not(reset.body.password, added.body.password);
  t.is((await d.request('GET', `/api/${a.id}/status`, as(bob))).status, 401, 'a reset ends the session');
  t.is((await d.request('POST', '/panel/api/session', { json: { operator: 'bob', password: added.body.password } })).status, 401);
  const bob2 = await signIn(d, { operator: 'bob', password: reset.body.password });
  t.is((await d.request('GET', `/api/${a.id}/status`, as(bob2))).status, 200);
  t.deepEqual((await d.request('DELETE', '/api/operators/bob', { secret: d.secret })).body, { success: true, name: 'bob', deleted: true });
  t.is((await d.request('GET', `/api/${a.id}/status`, as(bob2))).status, 401, 'a removal ends the session');
  t.is((await d.request('DELETE', '/api/operators/bob', { secret: d.secret })).status, 404);
  t.is((await d.request('POST', '/api/operators/bob/reset', { secret: d.secret })).status, 404);
  t.is((await d.request('POST', '/panel/api/session', { json: { operator: 'bob', password: reset.body.password } })).status, 401);
});

test('an agent reaches the inbox, chats and status of its own instances only; an admin operator reaches everything', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const mine = await d.connectedSandbox({ name: 'mine' });
  const other = await d.connectedSandbox({ name: 'other' });
  await d.request('POST', `/api/${mine.id}/sandbox/inbound`, { key: mine.key, json: { from: '+15550001111', message: 'hello shop', name: 'Ann' } });
  const agentPw = (await d.request('POST', '/api/operators', { secret: d.secret, json: { name: 'bob', role: 'agent', instances: [mine.id] } })).body.password as string;
  const adminPw = (await d.request('POST', '/api/operators', { secret: d.secret, json: { name: 'ann', role: 'admin' } })).body.password as string;
  const bob = await signIn(d, { operator: 'bob', password: agentPw });
  const chat = '15550001111@s.whatsapp.net';

  const allowed: Array<[string, string, unknown?]> = [
    ['GET', `/api/${mine.id}/status`],
    ['GET', `/api/${mine.id}/chats`],
    ['GET', `/api/${mine.id}/chats/${chat}/messages`],
    ['GET', `/api/${mine.id}/search?q=hello`],
    ['GET', `/api/${mine.id}/handovers`],
    ['POST', `/api/${mine.id}/send`, { to: chat, message: 'hi from bob' }],
    ['POST', `/api/${mine.id}/read`, { chatId: chat }],
    ['POST', `/api/${mine.id}/handover/claim`, { chatId: chat }],
    ['POST', `/api/${mine.id}/handover/release`, { chatId: chat }],
  ];
  for (const [method, path, json] of allowed) {
    const r = await d.request(method, path, { ...as(bob), ...(json !== undefined ? { json } : {}) });
    t.is(r.status, 200, `${method} ${path}: ${JSON.stringify(r.body)}`);
  }
  const refused: Array<[string, string, unknown?]> = [
    ['GET', `/api/${other.id}/status`],
    ['GET', `/api/${other.id}/chats`],
    ['POST', `/api/${other.id}/send`, { to: chat, message: 'x' }],
    ['GET', `/api/${mine.id}/qr-code`],
    ['GET', `/api/${mine.id}/webhook`],
    ['PUT', `/api/${mine.id}/webhook`, { url: 'https://example.com/h' }],
    ['GET', `/api/${mine.id}/flow`],
    ['PUT', `/api/${mine.id}/flow`, { name: 'x', start: 'a', nodes: { a: { type: 'message', text: 'x' } } }],
    ['POST', `/api/${mine.id}/rotate-key`],
    ['POST', `/api/${mine.id}/logout`],
    ['POST', `/api/${mine.id}/restart`],
    ['POST', `/api/${mine.id}/sandbox/inbound`, { from: '+15550001111', message: 'x' }],
    ['GET', '/api/instances'],
    ['GET', `/api/instances/${mine.id}`],
    ['POST', `/api/instances/${mine.id}/credits`, { add: 5 }],
    ['GET', `/api/instances/${mine.id}/usage`],
    ['GET', '/api/operators'],
    ['GET', `/api/audit?instanceId=${mine.id}`],
    ['POST', '/api/instances/create', { sandbox: true }],
  ];
  for (const [method, path, json] of refused) {
    const r = await d.request(method, path, { ...as(bob), ...(json !== undefined ? { json } : {}) });
    t.deepEqual([r.status, r.body.error?.code], [401, 'UNAUTHORIZED'], `${method} ${path}`);
  }
  // The agent's reply was sent as the instance.
  const sent = (await d.request('GET', `/api/${mine.id}/sandbox/sent`, { key: mine.key })).body.messages as Array<{ message?: string }>;
  t.truthy(sent.find((m) => m.message === 'hi from bob'));

  const ann = await signIn(d, { operator: 'ann', password: adminPw });
  t.like(ann.body, { role: 'admin', operator: 'ann' });
  for (const [method, path] of [
    ['GET', '/api/instances'],
    ['GET', `/api/instances/${other.id}`],
    ['GET', `/api/${other.id}/webhook`],
    ['GET', '/api/operators'],
    ['GET', '/api/audit'],
    ['GET', `/api/instances/${other.id}/usage`],
  ] as const) {
    t.is((await d.request(method, path, as(ann))).status, 200, `${method} ${path}`);
  }
});

test('wrong operator credentials get the one answer; an operator keeps at most the bound of sessions', async (t) => {
  const d = await startTestDaemon({ config: { rateLimit: { authFailures: 50 } } });
  t.teardown(() => d.close());
  const pw = (await d.request('POST', '/api/operators', { secret: d.secret, json: { name: 'ann', role: 'admin' } })).body.password as string;
  for (const body of [{ operator: 'ann', password: 'wrong' }, { operator: 'nobody', password: pw }, { operator: 'ann' }, { operator: 'x'.repeat(600), password: pw }]) {
    const r = await d.request('POST', '/panel/api/session', { json: body });
    t.deepEqual([r.status, r.body], [401, { success: false, error: { code: 'UNAUTHORIZED', message: 'invalid credentials' } }]);
  }
  const first = await signIn(d, { operator: 'ann', password: pw });
  for (let i = 0; i < MAX_SESSIONS_PER_PRINCIPAL; i += 1) await signIn(d, { operator: 'ann', password: pw });
  t.is((await d.request('GET', '/api/instances', as(first))).status, 401, 'the least recently used one ended');
  // The server secret's own sessions are another principal: untouched.
  const secret = await signIn(d, { secret: d.secret });
  for (let i = 0; i < 3; i += 1) await signIn(d, { operator: 'ann', password: pw });
  t.is((await d.request('GET', '/api/instances', as(secret))).status, 200);
});
