import test from 'ava';
import { spawn } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { dataDirHolder } from '../../src/storage/files/data-dir-lock.js';
import { GATEWAY_BIN, runCli } from '../helpers/cli.js';
import { prepareDataDir, tempDir, waitFor, type ConfigPatch } from '../helpers/daemon.js';

/** A data dir with no daemon and one instance created by the CLI. */
async function standalone(sandbox: boolean, config: ConfigPatch = {}): Promise<{ dataDir: string; id: string }> {
  const dataDir = await tempDir();
  await prepareDataDir(dataDir, config);
  const created = await runCli(['instance', 'create', '--json', ...(sandbox ? ['--sandbox'] : [])], { dataDir });
  if (created.code !== 0) throw new Error(created.stderr);
  return { dataDir, id: (JSON.parse(created.stdout) as { instanceId: string }).instanceId };
}

test('without a daemon, pair refuses a sandbox instance and says why', async (t) => {
  const { dataDir, id } = await standalone(true);
  const r = await runCli(['pair', id], { dataDir });
  t.is(r.code, 1);
  t.regex(r.stderr, /^gateway: inst_\S+ is a sandbox instance and no daemon is running: nothing would scan its QR\. Start the daemon \(gateway start\)/);
  t.is(r.stderr.trim().split('\n').length, 1, 'one line');
  t.is(r.stdout, '');
  t.is(dataDirHolder(dataDir), null, 'the data dir is left unlocked');
});

test('without a daemon, an unknown instance exits 4 and a bad --phone exits 2', async (t) => {
  const { dataDir } = await standalone(false);
  const missing = await runCli(['pair', 'inst_missing123'], { dataDir });
  t.is(missing.code, 4, missing.stderr);
  t.regex(missing.stderr, /^gateway: no instance with id "inst_missing123"\n$/);
  const bad = await runCli(['pair', 'inst_missing123', '--phone', '+0123'], { dataDir });
  t.is(bad.code, 2);
  t.regex(bad.stderr, /--phone.*E\.164/);
  const badTimeout = await runCli(['pair', 'inst_missing123', '--timeout', 'soon'], { dataDir });
  t.is(badTimeout.code, 2);
});

/** A TCP server that accepts and never answers: Baileys sits in `connecting`. */
async function silentServer(): Promise<{ url: string; server: Server; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws/chat`, server, sockets };
}

test('without a daemon, pair opens the connection itself, holds the data dir meanwhile and honours --timeout', async (t) => {
  const silent = await silentServer();
  try {
    const { dataDir, id } = await standalone(false, { baileys: { webSocketUrl: silent.url } });
    const child = spawn(process.execPath, [GATEWAY_BIN, '--data-dir', dataDir, 'pair', id, '--timeout', '10'], { env: { ...process.env, CI: 'true' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      await waitFor(() => /pairing inst_\S+ directly/.test(out), 15_000, `the standalone banner; ${out} ${err}`);
      await waitFor(() => silent.sockets.size > 0, 15_000, 'Baileys connecting to the configured socket URL');
      // (pair gives up after 10 s: time enough, even on a loaded machine, to try a start meanwhile)
      t.is(dataDirHolder(dataDir)?.kind, 'pair', 'pair holds the data dir');
      const start = await runCli(['start', '--port', '0'], { dataDir });
      t.is(start.code, 3, 'STORE_LOCKED');
      t.regex(start.stderr, /`gateway pair`.*is pairing on this data dir/);
      t.is(await exited, 1);
      t.regex(err, /gateway: timed out after 10 s/);
      t.regex(out, /status: initializing/);
      t.notRegex(out, /"level"/, 'no log lines on stdout');
    } finally {
      child.kill('SIGKILL');
    }
    t.is(dataDirHolder(dataDir), null, 'the lock is released on the way out');
  } finally {
    for (const s of silent.sockets) s.destroy();
    silent.server.close();
  }
});

test('without a daemon, a connection that gives up ends pair with exit 1 and the reason', async (t) => {
  // A server that hangs up on every connection: each attempt fails at once and the cap of 1 stops
  // it quickly. (Nothing listening at all is the fail-fast case: pair-gives-up.test.ts.)
  const hangUp = createServer((s) => s.destroy());
  await new Promise<void>((resolve) => hangUp.listen(0, '127.0.0.1', resolve));
  t.teardown(() => hangUp.close());
  const url = `ws://127.0.0.1:${(hangUp.address() as AddressInfo).port}/ws/chat`;
  const { dataDir, id } = await standalone(false, { baileys: { webSocketUrl: url, maxReconnectAttempts: 1, reconnectBaseMs: 0, reconnectMaxMs: 0 } });
  const r = await runCli(['pair', id], { dataDir });
  t.is(r.code, 1, r.stderr);
  t.regex(r.stderr, /gateway: pairing stopped: gave up after 1 failed reconnects/);
  t.is(dataDirHolder(dataDir), null);
});
