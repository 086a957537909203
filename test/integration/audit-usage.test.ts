/**
 * Guards issue 25, "nobody can tell who answered a customer, who rotated a key or who changed a
 * flow" and "a reseller cannot refund credits or see how many messages an instance sent this
 * month" (contract part 3, "Plans, operators and audit"): the audit log records sign-ins, key
 * rotations, plan changes (add, refund, premium), webhook and flow changes, instance create,
 * logout and delete, handover replies, claims and releases, each with its actor and outcome and
 * never a secret or a message body; GET /api/audit filters and pages it (an instance key reads its
 * own instance's entries only); a refund below the free credits is 409 INSUFFICIENT_CREDITS;
 * GET /api/instances/{id}/usage counts sends and debits per day.
 */
import test from 'ava';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';

interface Entry {
  at: string;
  actor: string;
  action: string;
  instanceId?: string;
  target?: string;
  outcome: string;
}

async function entries(d: TestDaemon, query = ''): Promise<Entry[]> {
  const r = await d.request('GET', `/api/audit?limit=500${query}`, { secret: d.secret });
  if (r.status !== 200) throw new Error(`audit ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.entries as Entry[];
}

test('audit: every kind of action, with its actor and outcome, never a secret or a message body', async (t) => {
  const d = await startTestDaemon({ config: { plans: { trialDays: 0 } } });
  t.teardown(() => d.close());
  const inst = await d.connectedSandbox({ name: 'shop', credits: 3 });
  const id = inst.id;
  const flow = { name: 'menu', start: 'a', nodes: { a: { type: 'handover', text: 'A person will answer.' } } };
  t.is((await d.request('PUT', `/api/${id}/flow`, { key: inst.key, json: flow })).status, 200);
  t.is((await d.request('PUT', `/api/${id}/webhook`, { key: inst.key, json: { url: 'https://example.com/hook?token=abc', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' } })).status, 200);
  t.is((await d.request('DELETE', `/api/${id}/webhook`, { key: inst.key })).status, 200);
  t.is((await d.request('POST', `/api/instances/${id}/credits`, { secret: d.secret, json: { add: 10 } })).status, 200);
  t.is((await d.request('POST', `/api/instances/${id}/credits`, { secret: d.secret, json: { add: -4 } })).status, 200);
  t.is((await d.request('POST', `/api/instances/${id}/premium`, { secret: d.secret, json: { days: 5 } })).status, 200);
  const rotated = await d.request('POST', `/api/${id}/rotate-key`, { key: inst.key });
  const key = rotated.body.apiKey as string;

  // A person in the panel (an agent) answers a handed-over chat, claims it and releases it.
  await d.request('POST', `/api/${id}/sandbox/inbound`, { key, json: { from: '+15550002222', message: 'my secret order text', name: 'Cy' } });
  await d.flows.idle();
  const pw = (await d.request('POST', '/api/operators', { secret: d.secret, json: { name: 'bob', role: 'agent', instances: [id] } })).body.password as string;
  const signed = await d.request('POST', '/panel/api/session', { json: { operator: 'bob', password: pw } });
  t.is((await d.request('POST', '/panel/api/session', { json: { operator: 'bob', password: 'wrong' } })).status, 401);
  const h = { cookie: (signed.headers.get('set-cookie') ?? '').split(';')[0]!, 'x-csrf-token': signed.body.csrfToken as string };
  const chat = '15550002222@s.whatsapp.net';
  t.is((await d.request('POST', `/api/${id}/handover/claim`, { headers: h, json: { chatId: chat } })).status, 200);
  t.is((await d.request('POST', `/api/${id}/send`, { headers: h, json: { to: chat, message: 'the reply body stays out' } })).status, 200);
  t.is((await d.request('POST', `/api/${id}/handover/release`, { headers: h, json: { chatId: chat } })).status, 200);
  // An API send is traffic, not an audited action.
  t.is((await d.request('POST', `/api/${id}/send`, { key, json: { to: chat, message: 'api send' } })).status, 200);
  t.is((await d.request('POST', `/api/${id}/logout`, { key })).status, 200);
  t.is((await d.request('DELETE', `/api/${id}/flow`, { key })).status, 200);
  const gone = await d.createInstance({ sandbox: true });
  t.is((await d.request('DELETE', `/api/instances/${gone.id}`, { secret: d.secret })).status, 200);

  const all = await entries(d);
  const text = JSON.stringify(all);
  for (const secret of [d.secret, inst.key, key, pw, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'my secret order text', 'the reply body stays out', 'token=abc']) t.false(text.includes(secret), `no ${secret.slice(0, 12)}…`);
  const seen = (actor: string, action: string, extra: Partial<Entry> = {}) => t.truthy(all.find((e) => e.actor === actor && e.action === action && Object.entries(extra).every(([k, v]) => e[k as keyof Entry] === v)), `${actor} ${action} ${JSON.stringify(extra)}`);
  seen('secret', 'instance.create', { instanceId: id, outcome: 'ok' });
  seen(`instance:${id}`, 'flow.set', { target: 'menu' });
  seen(`instance:${id}`, 'webhook.set', { target: 'example.com' });
  seen(`instance:${id}`, 'webhook.remove');
  seen('secret', 'credits.add', { target: '+10' });
  seen('secret', 'credits.refund', { target: '-4' });
  seen('secret', 'premium.grant', { target: '+5 days' });
  seen(`instance:${id}`, 'key.rotate', { instanceId: id });
  seen('operator:bob', 'panel.signin', { outcome: 'ok' });
  seen('operator:bob', 'panel.signin', { outcome: 'UNAUTHORIZED' });
  seen('operator:bob', 'handover.claim', { target: chat });
  seen('operator:bob', 'handover.reply', { target: chat, outcome: 'ok' });
  seen('operator:bob', 'handover.release', { target: chat });
  seen(`instance:${id}`, 'instance.logout');
  seen(`instance:${id}`, 'flow.clear');
  seen('secret', 'instance.delete', { instanceId: gone.id });
  seen('secret', 'operator.add', { target: 'bob' });
  t.false(all.some((e) => e.action.endsWith('reply') && e.actor === `instance:${id}`), 'API sends are not audited');
  t.true(all.every((e, i) => i === 0 || e.at <= all[i - 1]!.at), 'newest first');

  // Filters and pages.
  t.true((await entries(d, '&actor=operator:bob')).every((e) => e.actor === 'operator:bob'));
  t.true((await entries(d, `&instanceId=${gone.id}`)).every((e) => e.instanceId === gone.id));
  const p1 = await d.request('GET', '/api/audit?limit=3', { secret: d.secret });
  const p2 = await d.request('GET', `/api/audit?limit=3&cursor=${p1.body.nextCursor}`, { secret: d.secret });
  t.deepEqual([...p1.body.entries, ...p2.body.entries], all.slice(0, 6));
  t.is((await d.request('GET', '/api/audit?limit=0', { secret: d.secret })).status, 400);

  // An instance key reads its own instance's entries, nothing else.
  const own = await d.request('GET', `/api/audit?instanceId=${id}&limit=500`, { key });
  t.is(own.status, 200);
  t.true(own.body.entries.length > 5);
  t.true((own.body.entries as Entry[]).every((e) => e.instanceId === id));
  t.is((await d.request('GET', '/api/audit', { key })).status, 401, 'which instance: its id is needed');
  t.is((await d.request('GET', `/api/audit?instanceId=${gone.id}`, { key })).status, 401);
  t.is((await d.request('GET', '/api/audit')).status, 401);
});

test('credits: a refund down to the free credits, 409 INSUFFICIENT_CREDITS below; usage per day counts sends and debits', async (t) => {
  const d = await startTestDaemon({ config: { plans: { trialDays: 0 } } });
  t.teardown(() => d.close());
  const inst = await d.connectedSandbox({ credits: 5 });
  for (let i = 0; i < 3; i += 1) t.is((await d.request('POST', `/api/${inst.id}/send`, { key: inst.key, json: { phone: '+15550003333', message: `m${i}` } })).status, 200);
  const refused = await d.request('POST', `/api/instances/${inst.id}/credits`, { secret: d.secret, json: { add: -3 } });
  t.deepEqual([refused.status, refused.body.error.code], [409, 'INSUFFICIENT_CREDITS']);
  const refunded = await d.request('POST', `/api/instances/${inst.id}/credits`, { secret: d.secret, json: { add: -2 } });
  t.is(refunded.status, 200);
  t.is(refunded.body.credits, 0);
  t.is(refunded.body.quotaRemaining, '0');
  // Premium sends count too (without a debit).
  t.is((await d.request('POST', `/api/instances/${inst.id}/premium`, { secret: d.secret, json: { days: 1 } })).status, 200);
  t.is((await d.request('POST', `/api/${inst.id}/send`, { key: inst.key, json: { phone: '+15550003333', message: 'free' } })).status, 200);

  const today = new Date().toISOString().slice(0, 10);
  const usage = await d.request('GET', `/api/instances/${inst.id}/usage`, { secret: d.secret });
  t.is(usage.status, 200);
  t.like(usage.body, { success: true, instanceId: inst.id, to: today, from: `${today.slice(0, 8)}01`, sent: 4, debited: 3 });
  t.deepEqual(usage.body.days, [{ date: today, sent: 4, debited: 3 }]);
  t.deepEqual((await d.request('GET', `/api/instances/${inst.id}/usage?from=2020-01-01&to=2020-01-31`, { secret: d.secret })).body.days, []);
  t.is((await d.request('GET', `/api/instances/${inst.id}/usage?from=2026-02-01&to=2026-01-01`, { secret: d.secret })).body.error.code, 'INVALID_FIELD');
  t.is((await d.request('GET', `/api/instances/${inst.id}/usage?from=2020-01-01&to=2026-01-01`, { secret: d.secret })).body.error.code, 'INVALID_FIELD');
  t.is((await d.request('GET', `/api/instances/${inst.id}/usage?from=yesterday`, { secret: d.secret })).status, 400);
  t.is((await d.request('GET', '/api/instances/inst_doesnotexist/usage', { secret: d.secret })).status, 404);
  t.is((await d.request('GET', `/api/instances/${inst.id}/usage`, { key: inst.key })).status, 401);
  // Kept across a restart of the daemon (written within a second, and at stop).
  await d.daemon.close();
  const again = await startTestDaemon({ dataDir: d.dataDir });
  t.teardown(() => again.close());
  const after = await again.request('GET', `/api/instances/${inst.id}/usage`, { secret: d.secret });
  t.deepEqual(after.body.days, [{ date: today, sent: 4, debited: 3 }]);
});

test('audit: refused sign-ins past the failure limit (429) are not recorded, so guesses cannot fill the log; an unknown name is anonymous', async (t) => {
  const d = await startTestDaemon({ config: { rateLimit: { authFailures: 3 } } });
  t.teardown(() => d.close());
  const statuses: number[] = [];
  for (let i = 0; i < 8; i += 1) statuses.push((await d.request('POST', '/panel/api/session', { json: { operator: `guess${i}`, password: 'x' } })).status);
  t.deepEqual(statuses, [401, 401, 401, 429, 429, 429, 429, 429]);
  const signins = (await entries(d)).filter((e) => e.action === 'panel.signin');
  t.deepEqual(signins.map((e) => [e.actor, e.outcome]), [['anonymous', 'UNAUTHORIZED'], ['anonymous', 'UNAUTHORIZED'], ['anonymous', 'UNAUTHORIZED']]);
  t.false(JSON.stringify(signins).includes('guess'), 'a guessed name is not written down');
});
