import test from 'ava';
import { readFile, writeFile, mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { GatewayError } from '../../src/domain/errors.js';
import { makeHarness, waitFor } from './baileys-fake-socket.js';

test('QR flow: initializing, rotating QR, scan, restartRequired at once, connected', async (t) => {
  const h = await makeHarness();
  t.is(h.conn.status, 'initializing');
  h.conn.start();
  h.conn.start(); // idempotent
  const s1 = await h.socket(1);
  t.is(s1.config.markOnlineOnConnect, false);
  t.is(s1.config.version, undefined, 'Baileys keeps its bundled version unless configured');
  t.false('printQRInTerminal' in s1.config);
  s1.connecting();
  t.is(h.conn.status, 'initializing');
  t.is(h.conn.qr, null);

  s1.qr('QR-1');
  t.is(h.conn.status, 'qr_code_generated');
  t.is(h.conn.qr, 'QR-1');
  s1.qr('QR-2');
  t.is(h.conn.qr, 'QR-2');
  t.deepEqual(h.qrs, ['QR-1', 'QR-2']);

  s1.scanned();
  t.is(h.conn.status, 'initializing');
  t.is(h.conn.qr, null);
  await s1.close(515);
  const s2 = await h.socket(2);
  t.is(s2.config.auth.creds, s1.config.auth.creds, 'the new socket reuses the saved creds object');
  t.truthy(s2.config.auth.creds.account);
  s2.open();
  t.is(h.conn.status, 'connected');
  t.is(h.overlaps, 0);
  t.deepEqual(
    h.statuses.map((c) => c.to),
    ['qr_code_generated', 'initializing', 'connected'],
  );
  t.true(h.statuses.every((c) => typeof c.reason === 'string' && c.reason.length > 0));

  // The credentials reach the disk (debounced), so a restart needs no new QR.
  await h.conn.stop();
  t.is(h.conn.status, 'disconnected');
  const saved = await readFile(join(h.dataDir, 'auth', 'inst-1.json'), 'utf8');
  t.true(saved.includes('15550001111:3@s.whatsapp.net'));
  t.is((await stat(join(h.dataDir, 'auth', 'inst-1.json'))).mode & 0o777, 0o600);
  await h.cleanup();
});

test('a transient close backs off, reconnects once, and never overlaps sockets', async (t) => {
  const h = await makeHarness({ settings: { reconnectBaseMs: 40, reconnectMaxMs: 40 } });
  h.conn.start();
  const s1 = await h.socket(1);
  s1.open();
  await s1.close(428);
  t.is(h.conn.status, 'disconnected');
  t.regex(h.conn.reason ?? '', /428.*; retry 1 of 4 in/);
  // Backing off: no socket yet.
  await new Promise((resolve) => setTimeout(resolve, 5));
  t.is(h.sockets.length, 1);
  const s2 = await h.socket(2);
  // The public status stays `disconnected` while it retries (issue 12: no status event per retry).
  t.is(h.conn.status, 'disconnected');
  s2.open();
  t.is(h.conn.status, 'connected');
  t.is(h.sockets.length, 2);
  t.is(h.overlaps, 0);
  await h.cleanup();
});

test('start() while waiting out a backoff retries now', async (t) => {
  const h = await makeHarness({ settings: { reconnectBaseMs: 60_000, reconnectMaxMs: 60_000 } });
  h.conn.start();
  await (await h.socket(1)).close(503);
  t.is(h.conn.status, 'disconnected');
  h.conn.start();
  await h.socket(2);
  t.is(h.overlaps, 0);
  await h.cleanup();
});

test('restartRequired after a scan is immediate even after earlier failed attempts', async (t) => {
  const h = await makeHarness({ settings: { reconnectBaseMs: 60_000, reconnectMaxMs: 60_000 } });
  h.conn.start();
  await (await h.socket(1)).close(408);
  h.conn.start(); // cut the long backoff short
  const s2 = await h.socket(2);
  s2.qr('Q');
  s2.scanned();
  await s2.close(515);
  (await h.socket(3)).open();
  t.is(h.conn.status, 'connected');
  await h.cleanup();
});

test('loggedOut clears the credentials and starts a fresh pairing with a new QR', async (t) => {
  const h = await makeHarness();
  h.conn.start();
  const s1 = await h.socket(1);
  s1.qr('QR-A');
  s1.scanned();
  await s1.close(515);
  const s2 = await h.socket(2);
  s2.open();
  await h.conn.stop();
  const file = join(h.dataDir, 'auth', 'inst-1.json');
  await readFile(file); // saved while paired
  h.conn.start();
  const s3 = await h.socket(3);
  s3.open();
  const oldNoise = Buffer.from(s3.config.auth.creds.noiseKey.public);

  await s3.close(401);
  t.is(h.conn.status, 'disconnected');
  t.regex(h.conn.reason ?? '', /logged out/);
  const s4 = await h.socket(4);
  await t.throwsAsync(readFile(file), { code: 'ENOENT' });
  t.is(s4.config.auth.creds.account, undefined);
  t.notDeepEqual(Buffer.from(s4.config.auth.creds.noiseKey.public), oldNoise);
  s4.qr('QR-NEW');
  t.is(h.conn.status, 'qr_code_generated');
  t.is(h.conn.qr, 'QR-NEW');
  t.is(h.overlaps, 0);
  await h.cleanup();
});

test('QR rotation stops after maxQrRefreshes unscanned codes', async (t) => {
  const h = await makeHarness({ settings: { maxQrRefreshes: 3 } });
  h.conn.start();
  const s1 = await h.socket(1);
  s1.qr('Q1');
  s1.qr('Q2');
  s1.qr('Q3');
  t.is(h.conn.qr, 'Q3');
  s1.qr('Q4'); // Q3 expired unscanned
  t.is(h.conn.status, 'disconnected');
  t.regex(h.conn.reason ?? '', /QR not scanned/);
  t.is(h.conn.qr, null);
  t.deepEqual(h.qrs, ['Q1', 'Q2', 'Q3']);
  await waitFor(() => s1.ended, 'socket end');
  await new Promise((resolve) => setTimeout(resolve, 30));
  t.is(h.sockets.length, 1, 'no reconnect after giving up');

  // QR counting spans reconnects: Baileys running out of refs mid-way is just a transient close.
  h.conn.start();
  const s2 = await h.socket(2);
  s2.qr('R1');
  s2.qr('R2');
  await s2.close(408);
  const s3 = await h.socket(3);
  s3.qr('R3');
  await s3.close(408);
  t.is(h.conn.status, 'disconnected');
  t.regex(h.conn.reason ?? '', /QR not scanned/);
  await new Promise((resolve) => setTimeout(resolve, 30));
  t.is(h.sockets.length, 3);
  await h.cleanup();
});

test('connectionReplaced (440) does not reconnect', async (t) => {
  const h = await makeHarness();
  h.conn.start();
  const s1 = await h.socket(1);
  s1.open();
  await s1.close(440);
  t.is(h.conn.status, 'disconnected');
  t.regex(h.conn.reason ?? '', /replaced/);
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.is(h.sockets.length, 1);
  await h.cleanup();
});

test('403 and 405 stop with a reason that says what to do', async (t) => {
  for (const [code, pattern] of [
    [403, /403/],
    [405, /version.*baileys\.version/],
  ] as const) {
    const h = await makeHarness();
    h.conn.start();
    await (await h.socket(1)).close(code);
    t.is(h.conn.status, 'disconnected');
    t.regex(h.conn.reason ?? '', pattern);
    await new Promise((resolve) => setTimeout(resolve, 30));
    t.is(h.sockets.length, 1);
    await h.cleanup();
  }
});

test('gives up after maxReconnectAttempts consecutive failures; start() tries again', async (t) => {
  const h = await makeHarness({ settings: { maxReconnectAttempts: 3 } });
  h.conn.start();
  for (let n = 1; n <= 4; n++) await (await h.socket(n)).close(503);
  t.is(h.conn.status, 'disconnected');
  t.regex(h.conn.reason ?? '', /gave up after 3/);
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.is(h.sockets.length, 4);

  h.conn.start();
  const s5 = await h.socket(5);
  s5.open();
  t.is(h.conn.status, 'connected');
  t.is(h.overlaps, 0);
  await h.cleanup();
});

test('reaching open resets the failure count', async (t) => {
  const h = await makeHarness({ settings: { maxReconnectAttempts: 2 } });
  h.conn.start();
  for (let n = 1; n <= 6; n++) {
    const s = await h.socket(n);
    if (n % 2 === 0) s.open();
    await s.close(428);
  }
  await h.socket(7);
  t.not(h.conn.reason ?? '', /gave up/);
  await h.cleanup();
});

test('stop() ends the socket, ignores its close and cancels a pending retry', async (t) => {
  const h = await makeHarness({ settings: { reconnectBaseMs: 30, reconnectMaxMs: 30 } });
  h.conn.start();
  const s1 = await h.socket(1);
  s1.open();
  await h.conn.stop();
  t.true(s1.ended);
  t.is(s1.endedWith, undefined);
  t.is(h.conn.status, 'disconnected');
  await new Promise((resolve) => setTimeout(resolve, 60));
  t.is(h.sockets.length, 1);

  h.conn.start();
  await (await h.socket(2)).close(428);
  await h.conn.stop();
  await new Promise((resolve) => setTimeout(resolve, 60));
  t.is(h.sockets.length, 2);
  await h.cleanup();
});

test('a corrupt credentials file stops with a clear reason instead of showing a QR', async (t) => {
  const h = await makeHarness();
  await mkdir(join(h.dataDir, 'auth'), { recursive: true });
  const file = join(h.dataDir, 'auth', 'inst-1.json');
  await writeFile(file, '{"format":1,"creds":{"noiseKey":');
  h.conn.start();
  await waitFor(() => h.conn.status === 'disconnected', 'disconnected');
  t.regex(h.conn.reason ?? '', /credentials file .*inst-1\.json is unreadable/);
  t.is(h.sockets.length, 0);
  t.is(await readFile(file, 'utf8'), '{"format":1,"creds":{"noiseKey":');

  // Logging out is the way to start over.
  await h.conn.logout();
  await t.throwsAsync(readFile(file), { code: 'ENOENT' });
  h.conn.start();
  (await h.socket(1)).qr('FRESH');
  t.is(h.conn.qr, 'FRESH');
  await h.cleanup();
});

test('throwing hooks never break the connection', async (t) => {
  const h = await makeHarness({
    onStatus: () => {
      throw new Error('status hook');
    },
    onQr: () => {
      throw new Error('qr hook');
    },
  });
  h.conn.start();
  const s1 = await h.socket(1);
  s1.qr('Q');
  t.is(h.conn.qr, 'Q');
  s1.open();
  t.is(h.conn.status, 'connected');
  await h.cleanup();
});

test('Baileys options: version, websocket URL and logger from settings', async (t) => {
  const h = await makeHarness({ settings: { version: [2, 3000, 1], webSocketUrl: 'ws://127.0.0.1:9/ws/chat', logLevel: 'error' } });
  h.conn.start();
  const s1 = await h.socket(1);
  t.deepEqual(s1.config.version, [2, 3000, 1]);
  t.is(s1.config.waWebSocketUrl, 'ws://127.0.0.1:9/ws/chat');
  t.is(s1.config.logger?.level, 'error');
  await h.cleanup();
});

test('logout(): unlinks when connected, removes credentials, stays down', async (t) => {
  const h = await makeHarness();
  h.conn.start();
  const s1 = await h.socket(1);
  s1.qr('Q');
  s1.scanned();
  await s1.close(515);
  const s2 = await h.socket(2);
  s2.open();
  await h.conn.stop();
  h.conn.start();
  const s3 = await h.socket(3);
  s3.open();
  await h.conn.logout();
  t.is(s3.logoutCalls, 1);
  t.true(s3.ended);
  t.is(h.conn.status, 'disconnected');
  t.is(h.conn.reason, 'logged out');
  await t.throwsAsync(readFile(join(h.dataDir, 'auth', 'inst-1.json')), { code: 'ENOENT' });
  await new Promise((resolve) => setTimeout(resolve, 30));
  t.is(h.sockets.length, 3);
  await h.cleanup();
});

test('requestPairingCode waits for the socket to offer pairing, then asks with digits only', async (t) => {
  const h = await makeHarness();
  const pending = h.conn.requestPairingCode('+15551234567');
  const s1 = await h.socket(1);
  s1.qr('Q');
  t.is(await pending, 'ABCD1234');
  t.deepEqual(s1.pairingRequests, ['15551234567']);

  await t.throwsAsync(h.conn.requestPairingCode('15551234567'), { instanceOf: GatewayError, message: /E\.164/ });

  // The phone never confirmed: the half-written `me` must not turn the next socket into a login.
  await s1.close(408);
  const s2 = await h.socket(2);
  t.is(s2.config.auth.creds.me, undefined);
  s2.open();
  await t.throwsAsync(h.conn.requestPairingCode('+15551234567'), { instanceOf: GatewayError, message: /already paired/ });
  await h.cleanup();
});

test('requestPairingCode gives up clearly when WhatsApp never offers pairing', async (t) => {
  const h = await makeHarness({ pairingTimeoutMs: 30 });
  const err = await t.throwsAsync(h.conn.requestPairingCode('+15551234567'), { instanceOf: GatewayError });
  t.is(err?.code, 'CONNECTION_NOT_READY');
  await h.cleanup();
});
