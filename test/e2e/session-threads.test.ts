import test from 'ava';
import { startGatewayOnDouble, type GatewayOnDouble } from '../protocol-double/child.js';
import { randomPng } from '../protocol-double/fixtures.js';
import { request, waitFor } from '../helpers/daemon.js';
import { readFileSync, readdirSync } from 'node:fs';
import { nodeHelperThreads } from '../../src/connection/threads/helper-threads.js';
import { SESSION_THREAD_NICE } from '../../src/connection/threads/session-threads.js';
import { linuxSerialTest } from '../helpers/linux.js';

// Rule (issue "Performance, round 2", item 3: no stall while phones pair): with
// `baileys.sessionThreads` the BUILT daemon (bin/gateway, a child process) runs its Baileys sessions
// on threads of their own. These tests guard that a session still does everything across the thread
// boundary, through real Baileys against the protocol double: the double's certificate reaches the
// threads only through the daemon's own `--import` preload (NODE_OPTIONS), the credentials the
// thread makes are stored by the daemon (a kill -9 and a restart log in without a new pairing),
// media is downloaded through the thread, errors keep their codes, the thread's log lines are the
// daemon's.

let gw: GatewayOnDouble;

test.before(async () => {
  gw = await startGatewayOnDouble({ double: { assumedPreKeys: 0 }, config: { baileys: { sessionThreads: 2 }, media: { maxBytes: 1024 * 1024 }, logLevel: 'debug' } });
});

test.after.always(async () => {
  await gw?.close();
});

test.afterEach.always((t) => {
  if (gw.double.errors.length > 0) t.log(gw.double.errors);
  if (!t.passed) t.log(gw.output().slice(-6000));
});

/** A thread's nice value (field 19 of /proc/<pid>/task/<tid>/stat; the name in field 2 has no spaces here). */
function niceOf(pid: number, tid: number): number {
  return Number(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]);
}

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${gw.daemon.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : NaN;
}

test.serial('the session runs on a session thread: a text goes out and is decrypted, receipts become webhooks, an image comes in through the thread byte for byte', async (t) => {
  t.is(await metric('gateway_session_threads'), 2, 'two session threads run');
  t.is(await metric('gateway_session_threads_replaced'), 0);

  const ana = await gw.double.contact('+15550007101', { name: 'Ana' });
  const res = await gw.api('POST', '/send', { json: { phone: ana.phone, message: 'from a session thread' } });
  t.is(res.status, 200, JSON.stringify(res.body));
  const m = await ana.nextMessage();
  t.is(m.id, res.body.messageId);
  t.is(m.text, 'from a session thread');
  ana.receipt(m, 'read');
  await gw.waitEvent('message.status', (e) => e.data.messageId === m.id && e.data.status === 'read');

  const bytes = randomPng(40);
  const inId = await ana.sendImage(gw.double.accountJid(), bytes, { caption: 'back to you' });
  const ev = await gw.waitEvent('message.received', (e) => e.data.messageId === inId);
  t.like(ev.data, { type: 'image', caption: 'back to you', media: { mimetype: 'image/png', size: bytes.length } });
  const media = await fetch(`${gw.daemon.url}${ev.data.media.url as string}`, { headers: { 'x-api-key': gw.key } });
  t.is(media.status, 200);
  t.true(Buffer.from(await media.arrayBuffer()).equals(bytes), 'downloaded and decrypted in the thread, stored by the daemon');
  t.deepEqual(gw.double.errors, []);
});

test.serial("an error raised in the session thread reaches the client with its code and the daemon's error body", async (t) => {
  const res = await gw.api('POST', '/groups/join', { json: { code: 'NoSuchInviteCode1' } });
  t.is(res.status, 404, JSON.stringify(res.body));
  t.like(res.body, { success: false, error: { code: 'NOT_FOUND' } });
  t.false(JSON.stringify(res.body).includes(' at '), 'no stack trace');
});

test.serial("the session thread's log lines are the daemon's: JSON on its stdout, with the instance id, and no key", async (t) => {
  const lines = gw
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  // The daemon at debug: each status change of the connection is a line the session thread wrote.
  const fromThread = lines.filter((l) => l.component === 'baileys-connection');
  t.true(fromThread.some((l) => l.msg === 'connection status changed' && l.to === 'connected'), 'the thread said it connected, in the daemon\'s log');
  for (const l of fromThread) t.is(l.instanceId, gw.id);
  t.true(fromThread.every((l) => l.pid === gw.daemon.child.pid || l.pid === undefined), 'written as the daemon (its pid)');
  t.false(gw.output().includes(gw.key), 'the instance key never appears in the log');
});

test.serial('kill -9 and a restart: the credentials made in the session thread were stored by the daemon, the account logs in again without a new pairing, and a message sent meanwhile arrives', async (t) => {
  const registrations = gw.double.registrations().length;
  const bea = await gw.double.contact('+15550007102', { name: 'Bea' });
  await gw.kill9();
  const whileDown = await bea.sendText(gw.double.accountJid(), 'sent while the daemon was down');
  await gw.restart();
  t.is(gw.double.registrations().length, registrations, 'no new pairing');
  await gw.waitEvent('message.received', (e) => e.data.messageId === whileDown);
  const res = await gw.api('POST', '/send', { json: { phone: bea.phone, message: 'back after kill -9' } });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is((await bea.nextMessage()).text, 'back after kill -9');
  t.is(await metric('gateway_session_threads'), 2);
  const status = await request(gw.daemon.url, 'GET', `/api/${gw.id}/status`, { key: gw.key });
  t.is(status.body.status, 'connected');
  await waitFor(() => gw.double.errors.length === 0, 1000, 'no double errors');
});

// Rule (issue 26, item 3: `pairing_loop_lag_ms`): below the daemon's thread run the session threads
// and, on Linux, V8's helper threads (the platform workers that do the session heaps' concurrent and
// parallel collection); the daemon's own thread keeps its priority. Fails when the helpers are not
// found (a Node that made them differently) or not lowered.
linuxSerialTest("the session threads and V8's helper threads run below the daemon's thread (Linux)", (t) => {
  const pid = gw.daemon.child.pid!;
  t.is(niceOf(pid, pid), 0, "the daemon's thread keeps its priority");
  const helpers = nodeHelperThreads(pid);
  t.true(helpers.length >= 4, `V8's platform workers found (${helpers.length} threads blocking SIGUSR1)`);
  for (const tid of helpers) t.is(niceOf(pid, tid), SESSION_THREAD_NICE, `helper thread ${tid}`);
  const lowered = readdirSync(`/proc/${pid}/task`).map(Number).filter((tid) => tid !== pid && !helpers.includes(tid) && niceOf(pid, tid) === SESSION_THREAD_NICE);
  t.true(lowered.length >= 2, `the two session threads (and what they start) at nice ${SESSION_THREAD_NICE}: ${lowered.length}`);
});
