import test from 'ava';
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import qrcode from 'qrcode-terminal';
import { GATEWAY_BIN, runCli } from '../helpers/cli.js';
import { startChildDaemon } from '../helpers/child-daemon.js';
import { prepareDataDir, request, tempDir, waitFor } from '../helpers/daemon.js';
import { FAST_BAILEYS, startDoubleDaemon } from '../protocol-double/harness.js';
import { childPreloadEnv, ProtocolDouble } from '../protocol-double/index.js';
import { terminalTest } from '../helpers/terminal.js';

// `gateway pair` (the built CLI, run `npm run build` first) against real Baileys and the protocol
// double: through a running daemon in a real pseudo-terminal, and standalone, where Baileys runs in
// the CLI process itself (trusting the double through the NODE_OPTIONS preload).

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

terminalTest('gateway pair in a terminal draws the QR Baileys made and exits 0 once the double scans it', async (t) => {
  const h = await startDoubleDaemon();
  const { id, key } = await h.createInstance();
  const command = [process.execPath, GATEWAY_BIN, '--data-dir', h.dataDir, 'pair', id].map(quote).join(' ');
  const child = spawn('script', ['-qefc', command, '/dev/null'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CI: 'true' } });
  let out = '';
  // A decoder across chunks: the drawing's block characters are multi-byte and chunks split them.
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (s: string) => (out += s));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  try {
    await waitFor(() => /Scan with WhatsApp/.test(out), 15_000, `the QR drawing; ${out}`);
    const res = await h.qrCode(id, key);
    t.is(res.status, 200);
    const qr = res.body.qr as string;
    let drawing = '';
    qrcode.generate(qr, { small: true }, (text) => (drawing = text));
    // The terminal shows the drawing of the QR the daemon serves (it may still be arriving).
    const expected = drawing.replace(/\n+$/, '');
    await waitFor(() => out.replace(/\r/g, '').includes(expected), 5000, `the drawing of ${qr}; ${out}`);

    await h.double.scan(qr);
    t.is(await exited, 0, out);
    t.regex(out, /status: connected/);
    t.is((await h.status(id, key)).status, 'connected');
  } finally {
    child.kill('SIGKILL');
    await h.close();
  }
});

test('gateway pair without a daemon pairs through the double; a child daemon then logs in with the saved credentials', async (t) => {
  const double = await ProtocolDouble.start();
  const dataDir = await tempDir('gw-double-');
  let daemon: Awaited<ReturnType<typeof startChildDaemon>> | undefined;
  try {
    await prepareDataDir(dataDir, { baileys: { ...FAST_BAILEYS, logLevel: 'silent', webSocketUrl: double.url } });
    const created = await runCli(['instance', 'create', '--json'], { dataDir });
    t.is(created.code, 0, created.stderr);
    const { instanceId: id, apiKey: key } = JSON.parse(created.stdout) as { instanceId: string; apiKey: string };

    const env = { ...process.env, CI: 'true', ...childPreloadEnv() };
    const child = spawn(process.execPath, [GATEWAY_BIN, '--data-dir', dataDir, '--json', 'pair', id], { stdio: ['ignore', 'pipe', 'pipe'], env });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const qrLine = await waitFor(
      () => out.split('\n').find((l) => l.includes('"type":"qr"')),
      15_000,
      `a QR line; ${out} ${err}`,
    );
    const { qr } = JSON.parse(qrLine) as { qr: string };
    await double.scan(qr);
    t.is(await exited, 0, `${out}\n${err}`);
    t.regex(out, /"status":"connected"/);
    t.is(double.registrations().length, 1);

    // The daemon (built, child process, preloaded too) uses those credentials: a login, no QR.
    const sessions = double.connections;
    daemon = await startChildDaemon(dataDir, [], childPreloadEnv());
    await waitFor(async () => (await request(daemon!.url, 'GET', `/api/${id}/status`, { key })).body.status === 'connected', 10_000, 'connected');
    t.true(double.sessions.slice(sessions).every((s) => s.kind === 'login'));
    t.is(double.registrations().length, 1);
  } finally {
    daemon?.kill('SIGKILL');
    await daemon?.exited;
    await double.close();
    await rm(dataDir, { recursive: true, force: true });
  }
});
