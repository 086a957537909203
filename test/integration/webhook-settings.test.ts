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
