import test from 'ava';
import { fakeFactory } from '../helpers/fake-connection.js';
import { startTestDaemon, waitFor } from '../helpers/daemon.js';

test('a sandbox instance walks every status: initializing, qr_code_generated, connected, disconnected, connected', async (t) => {
  const d = await startTestDaemon();
  try {
    const { id, key, body } = await d.createInstance({ sandbox: true, premiumDays: 30 });
    t.is(body.status, 'initializing');
    const status = async () => (await d.request('GET', `/api/${id}/status`, { key })).body.status as string;
    const started = Date.now();
    await waitFor(async () => (await status()) === 'qr_code_generated', 1000, 'QR within a second');
    t.true(Date.now() - started < 1000);

    const qr = await d.request('GET', `/api/${id}/qr-code`, { key });
    t.is(qr.status, 200);
    t.is(qr.body.status, 'qr_code_generated');
    t.is(typeof qr.body.qr, 'string');
    t.regex(qr.body.qrImage, /^data:image\/png;base64,[A-Za-z0-9+/=]{100,}$/);
    const png = Buffer.from(qr.body.qrImage.split(',')[1], 'base64');
    t.deepEqual([...png.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);

    t.is((await d.request('POST', `/api/${id}/sandbox/scan`, { key })).body.status, 'connected');
    t.is(await status(), 'connected');
    t.is((await d.request('GET', `/api/${id}/qr-code`, { key })).status, 409);

    t.is((await d.request('POST', `/api/${id}/sandbox/disconnect`, { key })).body.status, 'disconnected');
    t.is(await status(), 'disconnected');
    const notReady = await d.request('POST', `/api/${id}/send`, { key, json: { phone: '+15551234567', message: 'x' } });
    t.is(notReady.status, 503);
    t.is(notReady.body.error.code, 'CONNECTION_NOT_READY');

    t.is((await d.request('POST', `/api/${id}/sandbox/scan`, { key })).body.status, 'connected');
  } finally {
    await d.close();
  }
});

test('sandbox send, inbound and sent', async (t) => {
  const d = await startTestDaemon();
  try {
    const { id, key } = await d.connectedSandbox();
    const sent = await d.request('POST', `/api/${id}/send`, { key, json: { phone: '+15551234567', message: 'hello' } });
    t.is(sent.status, 200);
    t.deepEqual(Object.keys(sent.body).sort(), ['instanceId', 'messageId', 'quotaRemaining', 'success', 'to']);
    t.is(sent.body.to, '15551234567@s.whatsapp.net');
    t.is(sent.body.instanceId, id);
    const inbound = await d.request('POST', `/api/${id}/sandbox/inbound`, { key, json: { from: '+15557654321', message: 'hi back', name: 'Ann' } });
    t.is(inbound.status, 200);
    t.truthy(inbound.body.messageId);
    t.is((await d.request('POST', `/api/${id}/sandbox/inbound`, { key, json: { from: 'nope', message: 'x' } })).body.error.code, 'INVALID_PHONE');
    const list = await d.request('GET', `/api/${id}/sandbox/sent`, { key });
    t.is(list.body.messages.length, 1);
    t.like(list.body.messages[0], { messageId: sent.body.messageId, phone: '+15551234567', type: 'text', message: 'hello' });
  } finally {
    await d.close();
  }
});

test('a sandbox instance stays paired across a daemon restart', async (t) => {
  const d = await startTestDaemon();
  const { id, key } = await d.connectedSandbox();
  await d.daemon.close();
  const again = await startTestDaemon({ dataDir: d.dataDir });
  try {
    await waitFor(async () => (await again.request('GET', `/api/${id}/status`, { key })).body.status === 'connected', 2000, 'restored');
    t.pass();
  } finally {
    await again.close();
  }
});

test('sandbox routes are 404 for a WhatsApp instance; a failed send there costs nothing', async (t) => {
  const fake = fakeFactory();
  const d = await startTestDaemon({ whatsapp: fake.factory });
  try {
    await d.createInstance({ sandbox: false, owner: 'x' }); // takes the owner's trial
    const { id, key } = await d.createInstance({ sandbox: false, owner: 'x', credits: 1 });
    for (const [method, path] of [['POST', 'scan'], ['POST', 'disconnect'], ['GET', 'sent']] as const) {
      const res = await d.request(method, `/api/${id}/sandbox/${path}`, { key });
      t.is(res.status, 404);
      t.is(res.body.error.code, 'NOT_FOUND');
    }
    const conn = fake.made.get(id)!;
    conn.set('qr_code_generated', 'ref,noise,identity,adv');
    const qr = await d.request('GET', `/api/${id}/qr-code`, { key });
    t.is(qr.body.qr, 'ref,noise,identity,adv');
    conn.set('connected');
    conn.failNextSend = true;
    const failed = await d.request('POST', `/api/${id}/send`, { key, json: { phone: '+15551234567', message: 'x' } });
    t.is(failed.status, 500);
    t.deepEqual(failed.body, { success: false, error: { code: 'INTERNAL', message: 'internal error' } });
    const ok = await d.request('POST', `/api/${id}/send`, { key, json: { phone: '+15551234567', message: 'x' } });
    t.is(ok.status, 200);
    t.is(ok.body.quotaRemaining, '0');
    // The gateway chose the id before sending, and the connection sent under it.
    t.is(ok.body.messageId, conn.sent.at(-1)?.id);
  } finally {
    await d.close();
  }
});
