import test from 'ava';
import '../protocol-double/preload.js';
import { FAST_BAILEYS } from '../protocol-double/harness.js';
import { DoubleProcess } from '../protocol-double/process.js';
import { startTestDaemon, waitFor } from '../helpers/daemon.js';

// Guards the sessions bench's rule that the double runs in a process of its own (its CPU is not
// the daemon's nor the bench's): the double in a child process pairs a real Baileys instance over
// IPC commands, reports its logins, drops every connection, and ends with its process.

test('the double in its own process pairs an instance, counts its logins, drops it and exits on close', async (t) => {
  const dp = await DoubleProcess.start();
  t.teardown(() => dp.close());
  const d = await startTestDaemon({ config: { baileys: { ...FAST_BAILEYS, logLevel: 'silent', webSocketUrl: dp.url } } });
  t.teardown(() => d.close());
  const { id, key } = await d.createInstance({ sandbox: false });
  const qr = await waitFor(async () => {
    const res = await d.request('GET', `/api/${id}/qr-code`, { key });
    return res.status === 200 && typeof res.body.qr === 'string' ? (res.body.qr as string) : null;
  }, 15_000, 'a QR');
  const device = await dp.scan(qr);
  t.regex(device, /^\d+:1$/, 'the device is named by its key');
  await waitFor(async () => (await d.request('GET', `/api/${id}/status`, { key })).body.status === 'connected' || null, 15_000, 'connected');
  await dp.synced(device, 15_000);

  const before = await dp.logins();
  t.is(before.connected, 1, 'the login after the 515 restart is open');
  t.is(await dp.drop(), 1);
  const after = await waitFor(async () => {
    const s = await dp.logins(before.sessions);
    return s.connected === 1 ? s : null;
  }, 15_000, 'a new login');
  t.is(after.maxConcurrent, 1);
  t.is(await dp.contact('15550001000'), '+15550001000');
  t.deepEqual(await dp.errors(), { count: 0, first: [] });
  await t.throwsAsync(dp.synced('nobody:1'), { message: /no device nobody:1/ });

  await d.close();
  await dp.close();
  t.not(dp.child.exitCode ?? dp.child.signalCode, null, 'the child process is gone');
});
