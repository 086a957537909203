import test from 'ava';
import { spawn } from 'node:child_process';
import { lstat, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { pino } from 'pino';
import type { ConnectionObserver } from '../../src/connection/manager.js';
import { createControlPlugin } from '../../src/daemon/control/plugin.js';
import { ControlServer } from '../../src/daemon/control/server.js';
import { startTestDaemon, tempDir, waitFor } from '../helpers/daemon.js';
import { FakeConnection, fakeFactory } from '../helpers/fake-connection.js';

/** Sends raw bytes to the control socket; resolves with everything the daemon answered before closing. */
function exchange(path: string, payload: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (answer += d));
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
    socket.write(payload);
  });
}

function replies(answer: string): Array<Record<string, unknown>> {
  return answer
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

test('the control socket is 0600, answers bad input with errors and the daemon keeps serving', async (t) => {
  const fake = fakeFactory();
  const d = await startTestDaemon({ baileysFactory: fake.factory, plugins: [createControlPlugin()] });
  const path = join(d.dataDir, 'control.sock');
  try {
    const st = await lstat(path);
    t.true(st.isSocket());
    t.is(st.mode & 0o777, 0o600);

    t.like(replies(await exchange(path, 'this is not json\n'))[0], { type: 'error', code: 'INVALID_JSON' });
    t.like(replies(await exchange(path, '[1,2]\n'))[0], { type: 'error', code: 'INVALID_JSON' });
    t.like(replies(await exchange(path, '{"op":"format-disk"}\n'))[0], { type: 'error', code: 'INVALID_FIELD' });
    t.like(replies(await exchange(path, '{"op":"pair","instanceId":"inst_nobody123"}\n'))[0], { type: 'error', code: 'NOT_FOUND' });
    t.like(replies(await exchange(path, '{"op":"pair","instanceId":"__proto__"}\n'))[0], { type: 'error', code: 'NOT_FOUND' });
    const { id } = await d.createInstance({ sandbox: false });
    t.like(replies(await exchange(path, JSON.stringify({ op: 'pair', instanceId: id, phone: '12' }) + '\n'))[0], { type: 'error', code: 'INVALID_PHONE' });
    t.like(replies(await exchange(path, Buffer.from([0xff, 0xfe, 0x00, 0x0a])))[0], { type: 'error', code: 'INVALID_JSON' });

    // A huge line without a newline, then one with: both refused without buffering it all.
    const huge = replies(await exchange(path, 'x'.repeat(1024 * 1024)));
    t.like(huge[0], { type: 'error', code: 'PAYLOAD_TOO_LARGE' });
    t.like(replies(await exchange(path, `{"op":"pair","instanceId":"${'a'.repeat(10_000)}"}\n`))[0], { type: 'error', code: 'PAYLOAD_TOO_LARGE' });

    const health = await d.request('GET', '/healthz');
    t.is(health.status, 200);
    // And a well-formed request still works after all that.
    const pairing = exchange(path, JSON.stringify({ op: 'pair', instanceId: id }) + '\n');
    await waitFor(() => fake.made.get(id)?.status === 'initializing', 3000, 'start() called');
    await new Promise((r) => setTimeout(r, 50));
    fake.made.get(id)!.set('connected');
    const lines = replies(await pairing);
    t.deepEqual(lines.at(-1), { type: 'status', status: 'connected', reason: null });
  } finally {
    await d.close();
  }
  await t.throwsAsync(lstat(path), { code: 'ENOENT' }, 'stop removes the socket');
});

test('a stale socket file left by a killed daemon is replaced at start', async (t) => {
  const dataDir = await tempDir();
  const path = join(dataDir, 'control.sock');
  // A process that listens and dies by SIGKILL leaves its socket file behind.
  const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(path)}, () => console.log('up'))`], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  t.true((await lstat(path)).isSocket());

  const d = await startTestDaemon({ plugins: [createControlPlugin()] });
  const server = new ControlServer({ socketPath: path, manager: d.daemon.deps.manager, changedOnDisk: () => false, reload: async () => undefined, logger: pino({ level: 'silent' }) });
  try {
    await server.listen();
    t.like(replies(await exchange(path, 'nope\n'))[0], { code: 'INVALID_JSON' });
  } finally {
    await server.close();
    await d.close();
  }
});

test('a path that is not a socket is left alone and the daemon still starts', async (t) => {
  const dataDir = await tempDir();
  const path = join(dataDir, 'control.sock');
  await writeFile(path, 'precious');
  const server = new ControlServer({ socketPath: path, manager: { get: () => undefined, observe: () => () => undefined }, changedOnDisk: () => false, reload: async () => undefined, logger: pino({ level: 'silent' }) });
  await t.throwsAsync(server.listen(), { message: /not a socket/ });
  t.true((await lstat(path)).isFile());
});

test('a client that hangs up mid-pairing stops being followed; the connection keeps running', async (t) => {
  const dataDir = await tempDir();
  const path = join(dataDir, 'control.sock');
  const observers = new Set<ConnectionObserver>();
  const conn = new FakeConnection('inst_abcdef123', { onStatus: (change) => observers.forEach((o) => o({ type: 'status', change })), onQr: (qr) => observers.forEach((o) => o({ type: 'qr', qr })), onMessage: async () => undefined });
  const manager = {
    get: (id: string) => (id === conn.instanceId ? ({ connection: conn } as never) : undefined),
    observe: (_id: string, o: ConnectionObserver) => {
      observers.add(o);
      return () => observers.delete(o);
    },
  };
  const server = new ControlServer({ socketPath: path, manager, changedOnDisk: () => false, reload: async () => undefined, logger: pino({ level: 'silent' }), maxClients: 2 });
  await server.listen();
  try {
    const socket = createConnection(path);
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (answer += d));
    socket.write(JSON.stringify({ op: 'pair', instanceId: conn.instanceId }) + '\n');
    await waitFor(() => observers.size === 1, 3000, 'the session follows the connection');
    conn.set('qr_code_generated', 'qr-a');
    await waitFor(() => answer.includes('qr-a'), 3000, 'the QR streamed');
    socket.destroy();
    await waitFor(() => observers.size === 0, 3000, 'the observer removed on hang-up');
    conn.set('qr_code_generated', 'qr-b'); // nobody listening: must not throw
    t.is(conn.status, 'qr_code_generated');

    // Client limit: two followers, the third is told to come back later.
    const a = createConnection(path);
    const b = createConnection(path);
    for (const s of [a, b]) s.write(JSON.stringify({ op: 'pair', instanceId: conn.instanceId }) + '\n');
    await waitFor(() => observers.size === 2, 3000, 'two followers');
    t.like(replies(await exchange(path, '{}\n'))[0], { type: 'error', code: 'RATE_LIMITED' });
    a.destroy();
    b.destroy();
    await waitFor(() => observers.size === 0, 3000, 'both removed');
  } finally {
    await server.close();
  }
});
