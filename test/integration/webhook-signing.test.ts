import { createHmac, randomBytes } from 'node:crypto';
import test from 'ava';
import { Webhook } from 'standardwebhooks';
import { waitFor } from '../helpers/daemon.js';
import { inbound, setWebhook, withWebhookDaemon } from '../helpers/receiver.js';

test('a delivery signed with a whsec_ secret verifies with the standardwebhooks verifier', (t) =>
  withWebhookDaemon(async (d, receiver) => {
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const inst = await d.connectedSandbox();
    await setWebhook(d, inst, receiver.url, { secret });
    const messageId = await inbound(d, inst, '+15551234567', 'hello there');
    const [req] = await receiver.waitForCount(1);
    const verified = new Webhook(secret).verify(req!.body, req!.headers) as Record<string, unknown>;
    t.is(verified.type, 'message.received');
    t.is(verified.instanceId, inst.id);
    t.truthy(Date.parse(String(verified.timestamp)));
    t.like(verified.data, { messageId, from: '+15551234567', chatId: '15551234567@s.whatsapp.net', isGroup: false, type: 'text', text: 'hello there' });
    t.deepEqual(Object.keys(verified).sort(), ['data', 'instanceId', 'timestamp', 'type']);
    t.is(req!.method, 'POST');
    t.is(req!.headers['content-type'], 'application/json');
    t.regex(req!.headers['user-agent'] ?? '', /wa-gateway/);
    t.regex(req!.headers['webhook-id'] ?? '', /^msg_/);
    t.regex(req!.headers['webhook-timestamp'] ?? '', /^\d{10}$/);
    t.regex(req!.headers['webhook-signature'] ?? '', /^v1,[A-Za-z0-9+/]+=*$/);
    // A tampered body must not verify: the verifier really checks our signature.
    t.throws(() => new Webhook(secret).verify(req!.body.replace('hello', 'HELLO'), req!.headers));
  }));

test('no secret: no webhook-signature header, still webhook-id and webhook-timestamp', (t) =>
  withWebhookDaemon(async (d, receiver) => {
    const inst = await d.connectedSandbox();
    await setWebhook(d, inst, receiver.url);
    await inbound(d, inst, '+15551234567', 'unsigned');
    const [req] = await receiver.waitForCount(1);
    t.false('webhook-signature' in req!.headers);
    t.truthy(req!.headers['webhook-id']);
    t.truthy(req!.headers['webhook-timestamp']);
    t.is(req!.json.type, 'message.received');
  }));

test('a plain (non-whsec) secret keys the HMAC with its UTF-8 bytes', (t) =>
  withWebhookDaemon(async (d, receiver) => {
    const secret = 'not-base64 plain secret';
    const inst = await d.connectedSandbox();
    await setWebhook(d, inst, receiver.url, { secret });
    await inbound(d, inst, '+15551234567', 'plain');
    const [req] = await receiver.waitForCount(1);
    const h = req!.headers;
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${h['webhook-id']}.${h['webhook-timestamp']}.${req!.body}`).digest('base64');
    t.is(h['webhook-signature'], `v1,${expected}`);
  }));

test('instance.status and qr.updated are delivered and signed the same way', (t) =>
  withWebhookDaemon(async (d, receiver) => {
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const created = await d.createInstance({ sandbox: true, webhookUrl: receiver.url, webhookSecret: secret });
    // A new sandbox instance shows a QR within a second; scanning connects it.
    await waitFor(() => receiver.requests.some((r) => r.json.type === 'qr.updated'), 5000, 'qr.updated');
    const scan = await d.request('POST', `/api/${created.id}/sandbox/scan`, { key: created.key });
    t.is(scan.status, 200);
    await waitFor(() => receiver.requests.some((r) => r.json.type === 'instance.status' && r.json.data.to === 'connected'), 5000, 'connected');
    const all = receiver.requests;
    for (const req of all) t.notThrows(() => new Webhook(secret).verify(req.body, req.headers));
    const statuses = all.filter((r) => r.json.type === 'instance.status').map((r) => r.json.data);
    // A new instance is born `initializing`: its first event is the QR, then the scan.
    t.deepEqual(statuses.map((s) => [s.from, s.to]), [['initializing', 'qr_code_generated'], ['qr_code_generated', 'connected']]);
    t.is(statuses[1]!.reason, 'scanned');
    const qr = all.find((r) => r.json.type === 'qr.updated');
    t.truthy(qr);
    t.regex(String(qr!.json.data.qr), /^sandbox:/);
  }));
