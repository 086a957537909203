import test from 'ava';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';

function expectError(t: import('ava').ExecutionContext, res: { status: number; body: any }, status: number, code: string): void { // eslint-disable-line @typescript-eslint/no-explicit-any
  t.is(res.status, status, `${code}: ${JSON.stringify(res.body)}`);
  t.is(res.body?.success, false);
  t.is(res.body?.error?.code, code);
  t.is(typeof res.body?.error?.message, 'string');
  t.false(JSON.stringify(res.body).includes('    at '), 'never a stack trace');
}

async function withDaemon(fn: (d: TestDaemon, inst: { id: string; key: string }) => Promise<void>): Promise<void> {
  const d = await startTestDaemon();
  try {
    await fn(d, await d.connectedSandbox());
  } finally {
    await d.close();
  }
}

test('400 rows: missing and invalid fields, phones and JSON', async (t) => {
  await withDaemon(async (d, { id, key }) => {
    const send = (json: unknown) => d.request('POST', `/api/${id}/send`, { key, json });
    expectError(t, await send({ message: 'hi' }), 400, 'MISSING_FIELD');
    expectError(t, await send({ phone: '+15551234567' }), 400, 'MISSING_FIELD');
    expectError(t, await send({ phone: '+15551234567', message: 42 }), 400, 'INVALID_FIELD');
    expectError(t, await send({ phone: '+15551234567', message: ['x'] }), 400, 'INVALID_FIELD');
    for (const phone of ['15551234567', '+0555123456', '+123', '+1234567890123456', '+1555 123', 12345678, '+1555123456a']) {
      expectError(t, await send({ phone, message: 'hi' }), 400, 'INVALID_PHONE');
    }
    expectError(t, await send([1, 2]), 400, 'INVALID_JSON');
    expectError(t, await send('just a string'), 400, 'INVALID_JSON');
    expectError(t, await d.request('POST', `/api/${id}/send`, { key, body: '{"phone":', headers: { 'content-type': 'application/json' } }), 400, 'INVALID_JSON');
    expectError(t, await d.request('POST', `/api/${id}/send`, { key, body: '', headers: { 'content-type': 'application/json' } }), 400, 'MISSING_FIELD');
  });
});

test('415 for a wrong content type, 413 for a huge body', async (t) => {
  await withDaemon(async (d, { id, key }) => {
    expectError(t, await d.request('POST', `/api/${id}/send`, { key, body: 'phone=+15551234567', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectError(t, await d.request('POST', `/api/${id}/send`, { key, body: 'hi', headers: { 'content-type': 'text/plain' } }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    const huge = JSON.stringify({ phone: '+15551234567', message: 'x'.repeat(2_000_000) });
    expectError(t, await d.request('POST', `/api/${id}/send`, { key, body: huge, headers: { 'content-type': 'application/json' } }), 413, 'PAYLOAD_TOO_LARGE');
    // send-media takes multipart or JSON (issue 24: `url` or `base64`); anything else is 415.
    expectError(t, await d.request('POST', `/api/${id}/send-media`, { key, body: 'phone=+15551234567', headers: { 'content-type': 'text/plain' } }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectError(t, await d.request('POST', `/api/${id}/send-media`, { key, json: { phone: '+15551234567' } }), 400, 'MISSING_FIELD');
  });
});

test('404 for unknown routes, 409 without a QR (sandbox routes of a WhatsApp instance: sandbox.test.ts)', async (t) => {
  await withDaemon(async (d, { id, key }) => {
    expectError(t, await d.request('GET', '/nope'), 404, 'NOT_FOUND');
    expectError(t, await d.request('GET', `/api/${id}/nope`, { key }), 404, 'NOT_FOUND');
    expectError(t, await d.request('GET', `/api/${id}/qr-code`, { key }), 409, 'QR_NOT_AVAILABLE');
  });
});

test('checks run in order: 401 before 400, 400 before 403, 403 before 503', async (t) => {
  await withDaemon(async (d) => {
    const poor = await d.createInstance({ sandbox: true, owner: 'poor-owner-1', premiumDays: 30 }); // premium
    const broke = await d.createInstance({ sandbox: true, owner: 'poor-owner-1' }); // no trial, no credits
    // 401 wins over bad input
    expectError(t, await d.request('POST', `/api/${broke.id}/send`, { key: 'wrong', json: { phone: 'bad' } }), 401, 'UNAUTHORIZED');
    // 400 wins over the plan
    expectError(t, await d.request('POST', `/api/${broke.id}/send`, { key: broke.key, json: { phone: 'bad', message: 'x' } }), 400, 'INVALID_PHONE');
    // 403 wins over the connection (not scanned: not connected)
    expectError(t, await d.request('POST', `/api/${broke.id}/send`, { key: broke.key, json: { phone: '+15551234567', message: 'x' } }), 403, 'QUOTA_EXHAUSTED');
    // premium but not connected: 503
    expectError(t, await d.request('POST', `/api/${poor.id}/send`, { key: poor.key, json: { phone: '+15551234567', message: 'x' } }), 503, 'CONNECTION_NOT_READY');
  });
});

test('odd bodies and headers never cause a 500', async (t) => {
  await withDaemon(async (d, { id, key }) => {
    const bodies = ['null', 'true', '1e999', '{"__proto__":{"x":1},"phone":"+15551234567","message":"hi"}', '{"constructor":{"prototype":{}}}', '\u0000', '{"phone":"+15551234567","message":"\\ud800"}'];
    for (const body of bodies) {
      const res = await d.request('POST', `/api/${id}/send`, { key, body, headers: { 'content-type': 'application/json' } });
      t.true(res.status < 500, `${body} -> ${res.status}`);
      t.is(typeof res.body, 'object');
    }
    const gz = await d.request('POST', `/api/${id}/send`, { key, body: 'xx', headers: { 'content-type': 'application/json', 'content-encoding': 'br-zz' } });
    t.true(gz.status >= 400 && gz.status < 500);
  });
});
