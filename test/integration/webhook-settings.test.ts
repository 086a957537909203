/**
 * Guards issue 12 / contract part 2, webhook settings: PUT /api/{id}/webhook and `gateway webhook
 * set` merge (a new URL alone keeps the secret and the events filter), `"secret": null` removes the
 * secret explicitly, and a `whsec_` secret that does not decode to at least 24 bytes is refused
 * (the stock Standard Webhooks verifier throws on it). Deliveries prove what is stored.
 */
import test from 'ava';
import { Webhook } from 'standardwebhooks';
import { startTestDaemon, waitFor } from '../helpers/daemon.js';
import { startReceiver } from '../helpers/receiver.js';
import { runCli } from '../helpers/cli.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

test('a new URL alone keeps the secret and the events filter; secret null removes it', async (t) => {
  const first = await startReceiver();
  const second = await startReceiver();
  t.teardown(() => first.close());
  t.teardown(() => second.close());
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const { id, key } = await d.connectedSandbox();
  const set = await d.request('PUT', `/api/${id}/webhook`, { key, json: { url: first.url, secret: SECRET, events: ['message.received'] } });
  t.is(set.status, 200, JSON.stringify(set.body));

  const moved = await d.request('PUT', `/api/${id}/webhook`, { key, json: { url: second.url } });
  t.is(moved.status, 200);
  t.like(moved.body.webhook, { url: second.url, signed: true, events: ['message.received'] });
  await d.request('POST', `/api/${id}/sandbox/inbound`, { key, json: { from: '+15551234567', message: 'to the new url' } });
  const [delivered] = await second.waitForCount(1);
  t.is(delivered!.json.type, 'message.received');
  t.notThrows(() => new Webhook(SECRET).verify(delivered!.body, delivered!.headers), 'still signed with the kept secret');
  // the events filter was kept: a status change is not delivered
  await d.request('POST', `/api/${id}/sandbox/disconnect`, { key });
  await new Promise((r) => setTimeout(r, 300));
  t.false(second.requests.some((r) => r.json.type === 'instance.status'));
  t.is(first.requests.length, 0);

  const unsigned = await d.request('PUT', `/api/${id}/webhook`, { key, json: { secret: null } });
  t.is(unsigned.status, 200);
  t.like(unsigned.body.webhook, { url: second.url, signed: false, events: ['message.received'] });
  await d.request('POST', `/api/${id}/sandbox/scan`, { key });
  await d.request('POST', `/api/${id}/sandbox/inbound`, { key, json: { from: '+15551234567', message: 'unsigned now' } });
  await waitFor(() => second.requests.length >= 2, 5000, 'second delivery');
  t.is(second.requests[1]!.headers['webhook-signature'], undefined);
});

test('a whsec_ secret shorter than 24 decoded bytes is refused with a 400 naming the field', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const { id, key } = await d.connectedSandbox();
  const short = `whsec_${Buffer.alloc(16, 7).toString('base64')}`;
  const res = await d.request('PUT', `/api/${id}/webhook`, { key, json: { url: 'http://127.0.0.1:9/hook', secret: short } });
  t.is(res.status, 400);
  t.is(res.body.error.code, 'INVALID_FIELD');
  t.regex(res.body.error.message, /secret/);
  t.regex(res.body.error.message, /24/);
  const notBase64 = await d.request('PUT', `/api/${id}/webhook`, { key, json: { url: 'http://127.0.0.1:9/hook', secret: 'whsec_***not base64***' } });
  t.is(notBase64.status, 400);
  const created = await d.request('POST', '/api/instances/create', { secret: d.secret, json: { sandbox: true, webhookUrl: 'http://127.0.0.1:9/hook', webhookSecret: short } });
  t.is(created.status, 400, 'create checks it the same way');
  const ok = await d.request('PUT', `/api/${id}/webhook`, { key, json: { url: 'http://127.0.0.1:9/hook', secret: SECRET } });
  t.is(ok.status, 200);
});

test('`gateway webhook set --url` alone keeps the secret and events; --unsigned removes the secret', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const { id, key } = await d.connectedSandbox();
  await d.request('PUT', `/api/${id}/webhook`, { key, json: { url: 'http://127.0.0.1:9/a', secret: SECRET, events: ['message.status'] } });
  const r = await runCli(['webhook', 'set', id, '--url', 'http://127.0.0.1:9/b', '--json'], { dataDir: d.dataDir });
  t.is(r.code, 0, r.stderr);
  t.like(JSON.parse(r.stdout), { url: 'http://127.0.0.1:9/b', signed: true, events: ['message.status'] });
  const u = await runCli(['webhook', 'set', id, '--unsigned', '--json'], { dataDir: d.dataDir });
  t.is(u.code, 0, u.stderr);
  t.like(JSON.parse(u.stdout), { url: 'http://127.0.0.1:9/b', signed: false, events: ['message.status'] });
  const bad = await runCli(['webhook', 'set', id, '--secret', `whsec_${Buffer.alloc(8).toString('base64')}`], { dataDir: d.dataDir });
  t.is(bad.code, 2);
  t.regex(bad.stderr, /24/);
});

test('GET /webhook shows the stored webhook; POST /webhook/test delivers a signed webhook.test whatever the events filter', async (t) => {
  // Contract part 2 ("Webhook: ... a send test event button", issue 16, and a tenant reading its
  // own settings): the test event goes through the outbox like any event, so it is signed, listed
  // and retried; it needs a webhook (404 without one).
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const { id, key } = await d.connectedSandbox();
  t.deepEqual((await d.request('GET', `/api/${id}/webhook`, { key })).body, { success: true, instanceId: id, webhook: null });
  const none = await d.request('POST', `/api/${id}/webhook/test`, { key });
  t.is(none.status, 404);
  t.is(none.body.error.code, 'NOT_FOUND');

  await d.request('PUT', `/api/${id}/webhook`, { key, json: { url: receiver.url, secret: SECRET, events: ['message.status'] } });
  t.like((await d.request('GET', `/api/${id}/webhook`, { key })).body.webhook, { url: receiver.url, signed: true, events: ['message.status'] });
  const queued = await d.request('POST', `/api/${id}/webhook/test`, { key });
  t.is(queued.status, 200, JSON.stringify(queued.body));
  t.like(queued.body.delivery, { type: 'webhook.test' });
  const [got] = await receiver.waitForCount(1);
  const event = new Webhook(SECRET).verify(got!.body, got!.headers) as { type: string; instanceId: string; data: { message: string } };
  t.is(event.type, 'webhook.test');
  t.is(event.instanceId, id);
  t.is(got!.headers['webhook-id'], queued.body.delivery.id, 'the delivery the answer named');
  await waitFor(async () => ((await d.request('GET', `/api/${id}/webhook/deliveries`, { key })).body.deliveries as Array<{ id: string; status: string }>).some((x) => x.id === queued.body.delivery.id && x.status === 'delivered'), 5000, 'listed as delivered');
});

test('`gateway webhook show` and `gateway webhook test` against the running daemon', async (t) => {
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const { id, key } = await d.connectedSandbox();
  const cli = (...args: string[]) => runCli(args, { dataDir: d.dataDir });
  t.regex((await cli('webhook', 'show', id)).stdout, /has no webhook/);
  await d.request('PUT', `/api/${id}/webhook`, { key, json: { url: receiver.url } });
  const shown = await cli('webhook', 'show', id, '--json');
  t.is(shown.code, 0, shown.stderr);
  t.like(JSON.parse(shown.stdout), { instanceId: id, webhook: { url: receiver.url, signed: false, events: 'all' } });
  const tested = await cli('webhook', 'test', id);
  t.is(tested.code, 0, tested.stderr);
  t.regex(tested.stdout, /Queued test delivery/);
  const [got] = await receiver.waitForCount(1);
  t.is(got!.json.type, 'webhook.test');
});
