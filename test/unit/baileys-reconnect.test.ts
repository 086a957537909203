import test from 'ava';
import { backoffDelay, decideOnClose, type CloseContext, type ReconnectSettings } from '../../src/connection/baileys/reconnect.js';

const settings: ReconnectSettings = { maxReconnectAttempts: 20, maxQrRefreshes: 5, reconnectBaseMs: 1000, reconnectMaxMs: 60_000 };
const ctx = (over: Partial<CloseContext>): CloseContext => ({ code: 428, failures: 1, qrShown: 0, paired: true, ...over });

test('backoff doubles per attempt, is capped, and keeps at least half of each step', (t) => {
  t.is(backoffDelay(1, 1000, 60_000, () => 1), 1000);
  t.is(backoffDelay(2, 1000, 60_000, () => 1), 2000);
  t.is(backoffDelay(5, 1000, 60_000, () => 1), 16_000);
  t.is(backoffDelay(30, 1000, 60_000, () => 1), 60_000);
  t.is(backoffDelay(500, 1000, 60_000, () => 1), 60_000);
  t.is(backoffDelay(3, 1000, 60_000, () => 0), 2000);
  for (let i = 0; i < 50; i++) {
    const d = backoffDelay(4, 1000, 60_000);
    t.true(d >= 4000 && d <= 8000);
  }
});

test('transient closes reconnect with backoff and keep credentials', (t) => {
  for (const code of [408, 428, 500, 503, 999, undefined]) {
    const d = decideOnClose(ctx({ code, failures: 3 }), settings, () => 0);
    t.is(d.action, 'reconnect', String(code));
    if (d.action === 'reconnect') {
      t.is(d.delayMs, 2000);
      t.false(d.clearCredentials);
    }
  }
});

test('restartRequired reconnects at once, but not twice in a row for free', (t) => {
  t.like(decideOnClose(ctx({ code: 515, failures: 1 }), settings), { action: 'reconnect', delayMs: 0, clearCredentials: false });
  const again = decideOnClose(ctx({ code: 515, failures: 2 }), settings, () => 0);
  t.is(again.action, 'reconnect');
  if (again.action === 'reconnect') t.true(again.delayMs > 0);
});

test('loggedOut clears credentials and pairs again after a delay', (t) => {
  const d = decideOnClose(ctx({ code: 401, failures: 1 }), settings, () => 0);
  t.like(d, { action: 'reconnect', clearCredentials: true });
  if (d.action === 'reconnect') t.true(d.delayMs >= 500);
  t.like(decideOnClose(ctx({ code: 411 }), settings), { action: 'reconnect', clearCredentials: true });
});

test('440, 403 and 405 stop with a reason', (t) => {
  t.like(decideOnClose(ctx({ code: 440 }), settings), { action: 'stop', clearCredentials: false });
  t.regex(decideOnClose(ctx({ code: 440 }), settings).reason, /replaced/);
  t.regex(decideOnClose(ctx({ code: 403 }), settings).reason, /403/);
  const v = decideOnClose(ctx({ code: 405 }), settings);
  t.is(v.action, 'stop');
  t.regex(v.reason, /version.*baileys\.version/);
});

test('gives up after maxReconnectAttempts consecutive failures', (t) => {
  t.is(decideOnClose(ctx({ failures: 20 }), settings).action, 'reconnect');
  const d = decideOnClose(ctx({ failures: 21 }), settings);
  t.is(d.action, 'stop');
  t.regex(d.reason, /gave up after 20/);
});

test('an unpaired socket that showed all its QR codes stops', (t) => {
  const d = decideOnClose(ctx({ code: 408, paired: false, qrShown: 5 }), settings);
  t.like(d, { action: 'stop' });
  t.regex(d.reason, /QR not scanned/);
  t.is(decideOnClose(ctx({ code: 408, paired: false, qrShown: 4 }), settings).action, 'reconnect');
});
