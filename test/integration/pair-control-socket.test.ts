/**
 * Guards issue 13 repair 1 (one writer): the daemon serves its own app on `DATA_DIR/control.sock`
 * (0600), where requests are trusted like the server secret, and `gateway pair` drives the daemon's
 * own connection through `POST /control/instances/{id}/pair` (NDJSON). Bad input there gets the
 * contract's 4xx errors and the daemon keeps serving; a stale socket file of a killed daemon is
 * replaced; anything else at that path is left alone; a client that hangs up stops being followed.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { lstat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { prepareDataDir, startTestDaemon, tempDir, waitFor } from '../helpers/daemon.js';
import { fakeFactory } from '../helpers/fake-connection.js';

interface SocketAnswer {
  status: number;
  body: string;
}

/** One HTTP request over the unix socket; `onData` sees the body as it streams. */
function viaSocket(socketPath: string, method: string, path: string, body?: string | Buffer, onData?: (text: string) => void, headers: Record<string, string> = {}): { done: Promise<SocketAnswer>; abort: () => void } {
  let abort = (): void => undefined;
  const done = new Promise<SocketAnswer>((resolve, reject) => {
    const req = httpRequest({ socketPath, method, path, headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
        onData?.(text);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    abort = () => {
      // Hanging up is the point: the answer is what arrived so far.
      resolve({ status: 0, body: '' });
      req.destroy();
    };
    if (body !== undefined) req.write(body);
    req.end();
  });
  return { done, abort };
}

const code = (a: SocketAnswer): string => (JSON.parse(a.body) as { error: { code: string } }).error.code;

test('the control socket is 0600, trusted, answers bad input with 4xx and the daemon keeps serving', async (t) => {
  const fake = fakeFactory();
  const d = await startTestDaemon({ whatsapp: fake.factory });
  const path = join(d.dataDir, 'control.sock');
  try {
    const st = await lstat(path);
    t.true(st.isSocket());
    t.is(st.mode & 0o777, 0o600);

    // Trusted: the admin routes answer without the server secret here, never over TCP.
    t.is((await viaSocket(path, 'GET', '/api/instances').done).status, 200);
    t.is((await d.request('GET', '/api/instances')).status, 401);

    const pair = (id: string, body: string | Buffer) => viaSocket(path, 'POST', `/control/instances/${encodeURIComponent(id)}/pair`, body).done;
    t.is(code(await pair('inst_nobody123', '{}')), 'NOT_FOUND');
    t.is(code(await pair('__proto__', '{}')), 'NOT_FOUND');
    const { id } = await d.createInstance({ sandbox: false });
    t.is(code(await pair(id, 'this is not json')), 'INVALID_JSON');
    t.is(code(await pair(id, '[1,2]')), 'INVALID_JSON');
    t.is(code(await pair(id, JSON.stringify({ phone: '12' }))), 'INVALID_PHONE');
    t.is(code(await pair(id, JSON.stringify({ format: 'disk' }))), 'INVALID_FIELD');
    t.is(code(await pair(id, Buffer.from([0xff, 0xfe, 0x00]))), 'INVALID_JSON');
    const huge = await pair(id, `{"phone":"${'1'.repeat(1024 * 1024)}"}`);
    t.is(huge.status, 413);
    t.is((await viaSocket(path, 'GET', '/control/nothing-here').done).status, 404);
    t.is((await d.request('GET', '/healthz')).status, 200);

    // A well-formed pairing still works after all that: the QR, then connected.
    let streamed = '';
    const pairing = viaSocket(path, 'POST', `/control/instances/${id}/pair`, '{}', (text) => (streamed = text));
    // The session reports the current status first; from then on it follows every change.
    await waitFor(() => streamed.includes('"type":"status"'), 3000, 'the session started');
    fake.made.get(id)!.set('qr_code_generated', 'qr-1');
    await waitFor(() => streamed.includes('qr-1'), 3000, 'the QR streamed');
    fake.made.get(id)!.set('connected');
    const answer = await pairing.done;
    t.is(answer.status, 200);
    const lines = answer.body.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    t.like(lines.find((l) => l.type === 'qr'), { type: 'qr', qr: 'qr-1' });
    t.like(lines.at(-1), { type: 'status', status: 'connected' });
  } finally {
    await d.close();
  }
  await t.throwsAsync(lstat(path), { code: 'ENOENT' }, 'stop removes the socket');
});

test('a client that hangs up mid-pairing stops being followed; the connection keeps running', async (t) => {
  const fake = fakeFactory();
  const d = await startTestDaemon({ whatsapp: fake.factory });
  t.teardown(() => d.close());
  const path = join(d.dataDir, 'control.sock');
  const { id } = await d.createInstance({ sandbox: false });
  let streamed = '';
  const first = viaSocket(path, 'POST', `/control/instances/${id}/pair`, '{}', (text) => (streamed = text));
  first.done.catch(() => undefined);
  await waitFor(() => streamed.includes('"type":"status"'), 3000, 'the session started');
  fake.made.get(id)!.set('qr_code_generated', 'qr-a');
  await waitFor(() => streamed.includes('qr-a'), 3000, 'the QR streamed');
  first.abort();
  await new Promise((r) => setTimeout(r, 100));
  fake.made.get(id)!.set('qr_code_generated', 'qr-b'); // nobody listening: must not throw
  t.is(fake.made.get(id)!.status, 'qr_code_generated');
  // A new follower gets the current state and the rest.
  let again = '';
  const second = viaSocket(path, 'POST', `/control/instances/${id}/pair`, '{}', (text) => (again = text));
  await waitFor(() => again.includes('qr-b'), 3000, 'the current QR for a new follower');
  fake.made.get(id)!.set('connected');
  t.is((await second.done).status, 200);
});

test('a stale socket file left by a killed daemon is replaced at start; any other file there is left alone', async (t) => {
  const dataDir = await tempDir();
  await prepareDataDir(dataDir, { webhooks: { allowPrivateTargets: true } });
  const path = join(dataDir, 'control.sock');
  // A process that listens and dies by SIGKILL leaves its socket file behind.
  const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(path)}, () => console.log('up'))`], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  t.true((await lstat(path)).isSocket());
  const d = await startTestDaemon({ dataDir });
  try {
    t.is((await viaSocket(path, 'GET', '/healthz').done).status, 200);
  } finally {
    await d.close();
  }

  const other = await tempDir();
  await prepareDataDir(other, { webhooks: { allowPrivateTargets: true } });
  const precious = join(other, 'control.sock');
  await writeFile(precious, 'precious');
  const d2 = await startTestDaemon({ dataDir: other });
  try {
    t.is((await d2.request('GET', '/healthz')).status, 200, 'the daemon still serves HTTP');
    t.true((await lstat(precious)).isFile(), 'the file is left alone');
  } finally {
    await d2.close();
  }
});
