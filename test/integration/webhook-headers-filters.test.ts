/**
 * Guards issue 24, "Webhooks, part 3" (DESIGN.md), on sandbox instances through a real daemon and
 * real receivers: PUT /api/{id}/webhook `headers` (up to 10, sent on every delivery and retry
 * beside a signature that still verifies; refused names and values are a 400 naming the header;
 * values never shown back, never logged, stored 0600; the headers stored at attempt time are the
 * ones sent, and changing them makes pending retries due at once) and `filters` (ignoreGroups,
 * onlyChats, ignoreChats with phones normalised to JIDs: an excluded event is never queued;
 * instance.status, about no chat, always is). The same through real Baileys:
 * webhook-headers-filters-double.test.ts.
 */
import test from 'ava';
import { readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { capturingLogger, prepareDataDir, startTestDaemon, tempDir, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { startReceiver, type ReceivedRequest } from '../helpers/receiver.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const TOKEN = 'Bearer tok_5d41402abc4b2a76b9719d911017c592';
const TENANT = 'tenant-7f3c2e91';
const GROUP = '120363041234567890@g.us';
const ALICE = '+15551230001';
const BOB = '+15551230002';

type Inst = { id: string; key: string };

async function put(d: TestDaemon, inst: Inst, json: unknown) {
  return d.request('PUT', `/api/${inst.id}/webhook`, { key: inst.key, json });
}

async function inbound(d: TestDaemon, inst: Inst, json: { from: string; message: string; chatId?: string }): Promise<string> {
  const res = await d.request('POST', `/api/${inst.id}/sandbox/inbound`, { key: inst.key, json });
  if (res.status !== 200) throw new Error(`inbound: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.messageId as string;
}

/** Every delivery the instance has queued (the outbox answers once an event is stored). */
async function queued(d: TestDaemon, inst: Inst): Promise<Array<{ id: string; type: string; status: string; attempts: number; nextAttemptAt: string | null }>> {
  return (await d.request('GET', `/api/${inst.id}/webhook/deliveries?limit=500`, { key: inst.key })).body.deliveries;
}

const chatOf = (r: ReceivedRequest) => r.json.data.chatId as string | undefined;

test('custom headers reach the receiver on every delivery and retry, and the Standard Webhooks signature still verifies', async (t) => {
  const receiver = await startReceiver();
  receiver.script(503);
  const d = await startTestDaemon({ config: { webhooks: { allowPrivateTargets: true, retryDelaysMs: [50] } } });
  t.teardown(async () => {
    await d.close();
    await receiver.close();
  });
  const inst = await d.connectedSandbox();
  const set = await put(d, inst, { url: receiver.url, secret: SECRET, headers: { Authorization: TOKEN, 'X-Tenant': TENANT, 'User-Agent': 'acme-hooks/1' } });
  t.is(set.status, 200, JSON.stringify(set.body));
  await inbound(d, inst, { from: ALICE, message: 'hello' });
  t.is((await d.request('POST', `/api/${inst.id}/webhook/test`, { key: inst.key })).status, 200);
  const got = await receiver.waitForCount(3);
  t.deepEqual(got.map((r) => r.json.type).sort(), ['message.received', 'message.received', 'webhook.test'], 'a failed attempt, its retry and the test event');
  for (const r of got) {
    t.is(r.headers.authorization, TOKEN);
    t.is(r.headers['x-tenant'], TENANT);
    t.is(r.headers['user-agent'], 'acme-hooks/1', 'the user-agent may be replaced');
    t.is(r.headers['content-type'], 'application/json');
    t.notThrows(() => new Webhook(SECRET).verify(r.body, r.headers), 'signed as before');
  }
});

test('each attempt sends the headers stored at that moment: a rotated Authorization makes the retries due at once', async (t) => {
  const receiver = await startReceiver();
  receiver.setDefault((r) => (r.headers.authorization === 'Bearer new' ? 200 : 401));
  // Retries 5 minutes apart: the delivery below can only arrive now if changing the headers made it due.
  const d = await startTestDaemon({ config: { webhooks: { allowPrivateTargets: true, retryDelaysMs: [300_000, 300_000] } } });
  t.teardown(async () => {
    await d.close();
    await receiver.close();
  });
  const inst = await d.connectedSandbox();
  t.is((await put(d, inst, { url: receiver.url, events: ['message.received'], headers: { Authorization: 'Bearer old' } })).status, 200);
  await inbound(d, inst, { from: ALICE, message: 'queued under the old token' });
  await waitFor(async () => (await queued(d, inst)).find((x) => x.attempts === 1 && x.nextAttemptAt !== null), 5_000, 'the first attempt refused, a retry scheduled');
  t.is(receiver.requests[0]!.headers.authorization, 'Bearer old');

  t.is((await put(d, inst, { headers: { Authorization: 'Bearer new' } })).status, 200);
  await receiver.waitForCount(2);
  t.is(receiver.requests[1]!.headers.authorization, 'Bearer new', 'the queued delivery went with the header stored now');
  t.is(receiver.requests[1]!.headers['webhook-id'], receiver.requests[0]!.headers['webhook-id'], 'the same delivery');
  await waitFor(async () => (await queued(d, inst))[0]?.status === 'delivered', 5_000, 'delivered');
});

test('a refused header name, a value with CR/LF and more than 10 headers are a 400 naming the header, and change nothing', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const inst = await d.connectedSandbox();
  t.is((await put(d, inst, { url: 'http://127.0.0.1:9/hook', headers: { Authorization: TOKEN } })).status, 200);
  const refused = [
    'Connection',
    'Keep-Alive',
    'Proxy-Authorization',
    'proxy-connection',
    'TE',
    'Trailer',
    'Transfer-Encoding',
    'Upgrade',
    'Host',
    'Content-Length',
    'content-type',
    'Expect',
    'webhook-id',
    'Webhook-Signature',
    'webhook-timestamp',
    'webhook-anything',
    'Bad Name',
    'X:Colon',
    'Ünicode',
  ];
  for (const name of refused) {
    const res = await put(d, inst, { headers: { 'X-Fine': 'ok', [name]: 'value-1' } });
    t.is(res.status, 400, name);
    t.is(res.body.error.code, 'INVALID_FIELD', name);
    t.true((res.body.error.message as string).includes(JSON.stringify(name)), `${name}: ${res.body.error.message as string}`);
  }
  const injected = await put(d, inst, { headers: { 'X-Injected': 'secret-part\r\nX-Evil: 1' } });
  t.is(injected.status, 400);
  t.regex(injected.body.error.message, /"X-Injected".*CR, LF/);
  t.false(JSON.stringify(injected.body).includes('secret-part'), 'the value is never echoed');
  const twice = await put(d, inst, { headers: { 'X-Key': 'a', 'x-key': 'b' } });
  t.is(twice.status, 400);
  t.regex(twice.body.error.message, /"x-key".*twice/);
  const eleven = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`X-H${i}`, 'v']));
  const tooMany = await put(d, inst, { headers: eleven });
  t.is(tooMany.status, 400);
  t.regex(tooMany.body.error.message, /at most 10/);
  const long = await put(d, inst, { headers: { 'X-Long': 'x'.repeat(4097) } });
  t.is(long.status, 400);
  t.regex(long.body.error.message, /X-Long/);
  t.is((await put(d, inst, { headers: Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`X-H${i}`, 'v'])) })).status, 200, 'ten are fine');
  t.is((await put(d, inst, { headers: { Authorization: TOKEN } })).status, 200);

  const shown = (await d.request('GET', `/api/${inst.id}/webhook`, { key: inst.key })).body.webhook;
  t.deepEqual(shown.headers, ['Authorization'], 'the refused changes left the stored headers alone');
  const admin = await d.request('POST', '/api/instances/create', { secret: d.secret, json: { sandbox: true, webhookUrl: 'http://127.0.0.1:9/hook', webhookHeaders: { Host: 'x' } } });
  t.is(admin.status, 400, 'the admin form checks them the same way');
  t.regex(admin.body.error.message, /^webhookHeaders: header "Host"/);
});

test('GET shows header names only; the values are stored in the 0600 instance store and survive a restart; null removes them', async (t) => {
  const dataDir = await tempDir();
  const secret = await prepareDataDir(dataDir, { webhooks: { allowPrivateTargets: true } });
  let d = await startTestDaemon({ dataDir });
  t.teardown(async () => {
    await d.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  const created = await d.request('POST', '/api/instances/create', { secret, json: { sandbox: true } });
  const inst: Inst = { id: created.body.instanceId, key: created.body.apiKey };
  const set = await put(d, inst, { url: 'http://127.0.0.1:9/hook', secret: SECRET, headers: { Authorization: TOKEN, 'X-Tenant': TENANT } });
  t.is(set.status, 200);
  t.deepEqual(set.body.webhook.headers, ['Authorization', 'X-Tenant']);
  const answers = [
    set,
    await d.request('GET', `/api/${inst.id}/webhook`, { key: inst.key }),
    await d.request('GET', `/api/instances/${inst.id}`, { secret }),
    await d.request('GET', '/api/instances', { secret }),
    await put(d, inst, { events: ['message.received'] }),
  ];
  for (const res of answers) {
    t.is(res.status, 200);
    const text = JSON.stringify(res.body);
    t.false(text.includes(TOKEN) || text.includes(TENANT) || text.includes('tok_5d41'), 'no header value in any answer');
  }
  t.deepEqual(answers[1]!.body.webhook.headers, ['Authorization', 'X-Tenant']);
  t.deepEqual(answers[4]!.body.webhook.headers, ['Authorization', 'X-Tenant'], 'a change of another field keeps them');

  const store = join(d.dataDir, 'instances.json');
  t.is((await stat(store)).mode & 0o777, 0o600);
  t.true((await readFile(store, 'utf8')).includes(TOKEN), 'kept with the webhook (attempts need it)');
  await d.close();
  d = await startTestDaemon({ dataDir });
  t.like((await d.request('GET', `/api/${inst.id}/webhook`, { key: inst.key })).body.webhook, { headers: ['Authorization', 'X-Tenant'], events: ['message.received'] }, 'the stored record loads again');

  const cleared = await put(d, inst, { headers: null });
  t.deepEqual(cleared.body.webhook.headers, []);
  t.false((await readFile(store, 'utf8')).includes(TOKEN));
});

test('the daemon log never carries a header value: not when set, delivered, retried, failed or refused', async (t) => {
  const receiver = await startReceiver();
  receiver.script(500, 401);
  const { logger, lines } = capturingLogger('trace');
  const d = await startTestDaemon({ logger, config: { webhooks: { allowPrivateTargets: true, retryDelaysMs: [30, 30] } } });
  t.teardown(async () => {
    await d.close();
    await receiver.close();
  });
  const inst = await d.connectedSandbox();
  t.is((await put(d, inst, { url: receiver.url, headers: { Authorization: TOKEN, 'X-Tenant': TENANT } })).status, 200);
  await inbound(d, inst, { from: ALICE, message: 'fails twice, then delivered' });
  await receiver.waitForCount(3);
  await waitFor(async () => (await queued(d, inst)).some((x) => x.status === 'delivered'), 5_000, 'delivered');
  // Failed for good, with the headers on: its error lines too.
  receiver.setDefault(500);
  await inbound(d, inst, { from: ALICE, message: 'fails for good' });
  await waitFor(async () => (await queued(d, inst)).some((x) => x.status === 'failed'), 5_000, 'failed');
  // Refused: a bad value and a bad name, with the token in it.
  t.is((await put(d, inst, { headers: { Authorization: `${TOKEN}\n` } })).status, 400);
  t.is((await put(d, inst, { headers: { Host: TOKEN } })).status, 400);
  t.is((await put(d, inst, { headers: { Authorization: 'Bearer rotated-9c1185a5c5e9fc54' } })).status, 200);

  t.true(lines.some((l) => l.msg === 'webhook attempt failed; will retry'), 'the failures were logged');
  t.true(lines.some((l) => l.msg === 'webhook delivered'), 'the delivery was logged (debug)');
  const text = lines.map((l) => JSON.stringify(l)).join('\n');
  for (const value of [TOKEN, 'tok_5d41402abc4b2a76b9719d911017c592', TENANT, 'rotated-9c1185a5c5e9fc54']) t.false(text.includes(value), `the log never carries ${value}`);
});

test('filters: ignoreGroups leaves group events out, instance.status (about no chat) is still delivered', async (t) => {
  const receiver = await startReceiver();
  const d = await startTestDaemon();
  t.teardown(async () => {
    await d.close();
    await receiver.close();
  });
  const inst = await d.connectedSandbox();
  const set = await put(d, inst, { url: receiver.url, filters: { ignoreGroups: true } });
  t.deepEqual(set.body.webhook.filters, { ignoreGroups: true, onlyChats: null, ignoreChats: [] });
  await inbound(d, inst, { from: ALICE, message: 'in the group', chatId: GROUP });
  await inbound(d, inst, { from: ALICE, message: 'just to you' });
  t.is((await d.request('POST', `/api/${inst.id}/sandbox/disconnect`, { key: inst.key })).status, 200);
  await waitFor(() => receiver.requests.some((r) => r.json.type === 'instance.status'), 5_000, 'instance.status delivered');
  const types = (await queued(d, inst)).map((x) => x.type);
  t.deepEqual(types.filter((x) => x === 'message.received'), ['message.received'], 'only the 1:1 message was queued');
  await waitFor(() => receiver.requests.some((r) => r.json.type === 'message.received'), 5_000, '1:1 delivered');
  t.deepEqual(
    receiver.requests.filter((r) => r.json.type === 'message.received').map(chatOf),
    ['15551230001@s.whatsapp.net'],
  );

  // Off again: the group's next message is delivered.
  t.deepEqual((await put(d, inst, { filters: null })).body.webhook.filters, { ignoreGroups: false, onlyChats: null, ignoreChats: [] });
  t.is((await d.request('POST', `/api/${inst.id}/sandbox/scan`, { key: inst.key })).status, 200);
  await inbound(d, inst, { from: ALICE, message: 'group again', chatId: GROUP });
  await waitFor(() => receiver.requests.some((r) => chatOf(r) === GROUP), 5_000, 'the group message, unfiltered');
});

test('filters: onlyChats and ignoreChats take phones (stored as JIDs) and chat ids; message.status follows its chat', async (t) => {
  const receiver = await startReceiver();
  const d = await startTestDaemon();
  t.teardown(async () => {
    await d.close();
    await receiver.close();
  });
  const inst = await d.connectedSandbox();
  const only = await put(d, inst, { url: receiver.url, filters: { onlyChats: [ALICE, GROUP, ALICE] } });
  t.is(only.status, 200, JSON.stringify(only.body));
  t.deepEqual(only.body.webhook.filters.onlyChats, ['15551230001@s.whatsapp.net', GROUP], 'phones normalised to JIDs, repeats dropped');
  const bad = await put(d, inst, { filters: { onlyChats: ['not-a-chat'] } });
  t.is(bad.status, 400);
  t.regex(bad.body.error.message, /filters\.onlyChats\[0\]/);

  await inbound(d, inst, { from: BOB, message: 'bob is not on the list' });
  await inbound(d, inst, { from: BOB, message: 'nor in the group', chatId: '120363049999999999@g.us' });
  await inbound(d, inst, { from: BOB, message: 'bob in the listed group', chatId: GROUP });
  await inbound(d, inst, { from: ALICE, message: 'alice is' });
  const sent = await d.request('POST', `/api/${inst.id}/send`, { key: inst.key, json: { phone: BOB, message: 'to bob' } });
  t.is(sent.status, 200, JSON.stringify(sent.body));
  const toAlice = await d.request('POST', `/api/${inst.id}/send`, { key: inst.key, json: { phone: ALICE, message: 'to alice' } });
  t.is(toAlice.status, 200);
  await waitFor(() => receiver.requests.some((r) => r.json.type === 'message.status' && r.json.data.messageId === toAlice.body.messageId), 5_000, "alice's message.status");
  t.deepEqual(
    [...new Set(receiver.requests.map(chatOf))].sort(),
    ['120363041234567890@g.us', '15551230001@s.whatsapp.net'],
    'only the listed chats',
  );
  t.false(receiver.requests.some((r) => r.json.data.messageId === sent.body.messageId), "no status of bob's message");

  // ignoreChats (wins over onlyChats when both name a chat).
  receiver.requests.length = 0;
  const ignore = await put(d, inst, { filters: { ignoreChats: [ALICE], onlyChats: [ALICE, BOB] } });
  t.deepEqual(ignore.body.webhook.filters, { ignoreGroups: false, onlyChats: ['15551230001@s.whatsapp.net', '15551230002@s.whatsapp.net'], ignoreChats: ['15551230001@s.whatsapp.net'] });
  await inbound(d, inst, { from: ALICE, message: 'ignored' });
  await inbound(d, inst, { from: BOB, message: 'bob now' });
  await waitFor(() => receiver.requests.some((r) => r.json.type === 'message.received'), 5_000, "bob's message");
  t.deepEqual(
    receiver.requests.filter((r) => r.json.type === 'message.received').map((r) => r.json.data.text),
    ['bob now'],
  );
  // A url change alone keeps the filters.
  const moved = await put(d, inst, { url: `${receiver.url}/moved` });
  t.deepEqual(moved.body.webhook.filters.ignoreChats, ['15551230001@s.whatsapp.net']);
});
