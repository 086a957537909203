import test from 'ava';
import { startDoubleDaemon } from '../protocol-double/harness.js';

// Contract part 2 "Instance lifecycle" on WhatsApp instances, through real Baileys and the protocol
// double: restart reconnects at once (a new login, no QR), logout unlinks the device at WhatsApp
// and shows a new QR, and the admin DELETE logs a paired instance out before its files go.

test('POST /restart logs in again at once; POST /logout unlinks the device and shows a new QR', async (t) => {
  const h = await startDoubleDaemon();
  t.teardown(() => h.close());
  const { id, key } = await h.pairedInstance();
  const device = h.double.lastDevice()!;
  const logins = h.double.logins().length;

  const restart = await h.d.request('POST', `/api/${id}/restart`, { key });
  t.is(restart.status, 200, JSON.stringify(restart.body));
  await h.waitStatus(id, key, 'connected');
  t.true(h.double.logins().length > logins, 'a new login');
  t.is(h.double.registrations().length, 1, 'no new pairing');

  const logout = await h.d.request('POST', `/api/${id}/logout`, { key });
  t.is(logout.status, 200, JSON.stringify(logout.body));
  t.true(device.removed, 'the device unlinked itself at WhatsApp (remove-companion-device)');
  await h.waitStatus(id, key, 'qr_code_generated');
  t.is((await h.qrCode(id, key)).status, 200, 'a new QR to pair again');
  t.is(h.double.registrations().length, 2);
});

test('the admin DELETE of a paired WhatsApp instance unlinks its device, then it is gone (404)', async (t) => {
  const h = await startDoubleDaemon();
  t.teardown(() => h.close());
  const { id, key } = await h.pairedInstance();
  const device = h.double.lastDevice()!;
  const del = await h.d.request('DELETE', `/api/instances/${id}`, { secret: h.secret });
  t.is(del.status, 200, JSON.stringify(del.body));
  t.like(del.body, { success: true, instanceId: id, deleted: true, logout: 'logged-out' });
  t.true(device.removed, 'unlinked at WhatsApp');
  t.is((await h.d.request('GET', `/api/instances/${id}`, { secret: h.secret })).status, 404);
  t.is((await h.d.request('GET', `/api/${id}/status`, { key })).status, 401);
});
