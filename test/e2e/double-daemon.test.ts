import test from 'ava';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startDoubleDaemon } from '../protocol-double/harness.js';
import { parseQr } from '../protocol-double/index.js';
import { waitFor } from '../helpers/daemon.js';

// The daemon with real Baileys sockets against the local WhatsApp protocol double
// (test/protocol-double): pairing, persistence across restarts, and the server faults that drive
// the reconnect policy.

test('a new instance shows Baileys QR, a scan connects it, a restarted daemon logs in again without a QR', async (t) => {
  const h = await startDoubleDaemon();
  try {
    const { id, key } = await h.createInstance();
    await h.waitStatus(id, key, 'qr_code_generated');
    const res = await h.qrCode(id, key);
    t.is(res.status, 200);
    const qr = res.body.qr as string;
    t.regex(qr, /^https:\/\/wa\.me\/settings\/linked_devices#/);
    // The QR is Baileys' own: the double's first ref, then this socket's keys.
    t.is(h.double.allRefs()[0], parseQr(qr).ref);
    t.true(parseQr(qr).noiseKey.equals(h.double.last()!.clientStatic!));
    t.regex(res.body.qrImage as string, /^data:image\/png;base64,/);

    const device = await h.double.scan(qr);
    await h.waitStatus(id, key, 'connected');
    t.is(h.double.registrations().length, 1);
    t.is(h.double.logins().length, 1);
    t.is(h.double.logins()[0]!.device?.jid, device.jid);
    t.is((await h.qrCode(id, key)).status, 409);
    const statuses = h.observed.get(id)!.flatMap((e) => (e.type === 'status' ? [e.change.to] : []));
    t.deepEqual(statuses.slice(-3), ['qr_code_generated', 'initializing', 'connected']);

    const sessionsBefore = h.double.connections;
    await h.restart();
    t.true(existsSync(join(h.dataDir, 'auth', `${id}.json`)));
    await h.waitStatus(id, key, 'connected');
    const after = h.double.sessions.slice(sessionsBefore);
    t.true(after.length >= 1);
    t.true(after.every((s) => s.kind === 'login' && s.refs.length === 0), 'no registration, no QR after the restart');
    t.is(h.double.logins().length, 2);
    t.is(h.double.last()!.device?.jid, device.jid);
    t.false(h.observed.get(id)!.some((e) => e.type === 'qr' && e.qr !== qr), 'no new QR');
  } finally {
    await h.close();
  }
});

test('device removed (401): credentials are cleared and a new QR for new keys appears', async (t) => {
  const h = await startDoubleDaemon();
  try {
    const { id, key, qr } = await h.pairedInstance();
    const old = parseQr(qr);
    const registrations = h.double.registrations().length;
    h.double.removeDevice();
    await h.waitStatus(id, key, 'qr_code_generated');
    const res = await h.qrCode(id, key);
    t.is(res.status, 200);
    const fresh = parseQr(res.body.qr as string);
    t.false(fresh.noiseKey.equals(old.noiseKey), 'new credentials, not the removed ones');
    t.false(fresh.identityKey.equals(old.identityKey));
    t.is(h.double.registrations().length, registrations + 1);
    t.is(h.double.last()!.kind, 'registration');
    const reasons = h.observed.get(id)!.flatMap((e) => (e.type === 'status' ? [e.change.reason ?? ''] : []));
    t.true(reasons.some((r) => /401/.test(r)), JSON.stringify(reasons));
    // And the new QR pairs again.
    await h.double.scan(res.body.qr as string);
    await h.waitStatus(id, key, 'connected');
  } finally {
    await h.close();
  }
});

test('connection replaced (440): disconnected with the reason, no reconnect loop', async (t) => {
  const h = await startDoubleDaemon();
  try {
    const { id, key } = await h.pairedInstance();
    const connections = h.double.connections;
    h.double.replaced();
    const st = await h.waitStatus(id, key, 'disconnected', { reason: /440/ });
    t.regex(st.reason!, /replaced/);
    // Backoff steps are 25-200 ms here: a loop would have reconnected several times by now.
    await new Promise((r) => setTimeout(r, 600));
    t.is(h.double.connections, connections, 'no new connection attempt');
    t.is((await h.status(id, key)).status, 'disconnected');
  } finally {
    await h.close();
  }
});

test('restart required (515) and an abrupt close: the daemon logs in again by itself', async (t) => {
  const h = await startDoubleDaemon();
  try {
    const { id, key } = await h.pairedInstance();
    let logins = h.double.logins().length;

    h.double.streamError(515);
    await waitFor(() => h.double.logins().length > logins, 5000, 'a login after 515');
    await h.waitStatus(id, key, 'connected');
    logins = h.double.logins().length;

    h.double.drop();
    await waitFor(() => h.double.logins().length > logins, 5000, 'a login after the drop');
    await h.waitStatus(id, key, 'connected');
    t.is(h.double.registrations().length, 1, 'the credentials survived both');
    const reasons = h.observed.get(id)!.flatMap((e) => (e.type === 'status' ? [e.change.reason ?? ''] : []));
    t.true(reasons.some((r) => /515/.test(r)), JSON.stringify(reasons));
    t.true(reasons.some((r) => /428/.test(r)), JSON.stringify(reasons));
  } finally {
    await h.close();
  }
});

test('QR refs exhausted: the socket closes (408), the daemon reconnects and shows a QR from the next refs', async (t) => {
  const h = await startDoubleDaemon();
  try {
    h.double.exhaustRefs(1);
    const { id, key } = await h.createInstance();
    await h.waitStatus(id, key, 'qr_code_generated');
    const regs = h.double.registrations();
    t.is(regs.length, 2);
    t.is(regs[0]!.refs.length, 0);
    const res = await h.qrCode(id, key);
    t.is(regs[1]!.refs[0], parseQr(res.body.qr as string).ref);
    const reasons = h.observed.get(id)!.flatMap((e) => (e.type === 'status' ? [e.change.reason ?? ''] : []));
    t.true(reasons.some((r) => /408/.test(r)), JSON.stringify(reasons));
  } finally {
    await h.close();
  }
});
