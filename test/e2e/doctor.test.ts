import { chmod, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import test from 'ava';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/daemon.js';

const made: string[] = [];
test.after.always(async () => {
  await Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

/** A data dir initialised by the CLI on a free port, with one instance. */
async function initialised(): Promise<string> {
  const root = await tempDir('gw-doctor-e2e-');
  made.push(root);
  const dir = join(root, 'data');
  const init = await runCli(['init', '--yes', '--port', String(await freePort())], { dataDir: dir });
  if (init.code !== 0) throw new Error(init.stderr);
  const created = await runCli(['instance', 'create', '--sandbox', '--credits', '5', '--json'], { dataDir: dir });
  if (created.code !== 0) throw new Error(created.stderr);
  // No internet here: WhatsApp's reachability is checked against a loopback stand-in.
  const config = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8')) as { baileys: Record<string, unknown> };
  config.baileys.webSocketUrl = `ws://127.0.0.1:${(await whatsappStandIn()).port}/ws/chat`;
  await writeFile(join(dir, 'config.json'), JSON.stringify(config));
  return dir;
}

let standIn: Promise<{ port: number }> | null = null;
function whatsappStandIn(): Promise<{ port: number }> {
  standIn ??= new Promise((resolve) => {
    const server = createServer((socket) => socket.destroy());
    server.listen(0, '127.0.0.1', () => {
      server.unref();
      resolve({ port: (server.address() as { port: number }).port });
    });
  });
  return standIn;
}

test('doctor on a healthy data dir exits 0', async (t) => {
  const dir = await initialised();
  const r = await runCli(['doctor'], { dataDir: dir });
  t.is(r.code, 0, r.stdout + r.stderr);
  t.regex(r.stdout, /All checks passed/);
  for (const name of ['node', 'baileys', 'data-dir', 'permissions', 'config', 'store', 'port', 'whatsapp', 'database']) t.regex(r.stdout, new RegExp(`ok\\s+${name}\\b`));
});

test('doctor --json prints one document', async (t) => {
  const dir = await initialised();
  const r = await runCli(['doctor', '--json'], { dataDir: dir });
  t.is(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout) as { ok: boolean; dataDir: string; checks: { name: string; status: string }[] };
  t.true(report.ok);
  t.is(report.dataDir, dir);
  t.deepEqual(report.checks.map((c) => c.status), ['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok']);
});

test('doctor names a corrupt instances.json and exits 1', async (t) => {
  const dir = await initialised();
  await writeFile(join(dir, 'instances.json'), '{"version":1,"instan', { mode: 0o600 });
  const r = await runCli(['doctor'], { dataDir: dir });
  t.is(r.code, 1);
  t.regex(r.stdout, /FAIL\s+store/);
  t.true(r.stdout.includes(join(dir, 'instances.json')));
  t.regex(r.stdout, /fix: .*backup/);
});

test('doctor names files with loose permissions and exits 1', async (t) => {
  const dir = await initialised();
  await chmod(join(dir, 'instances.json'), 0o644);
  const r = await runCli(['doctor', '--json'], { dataDir: dir });
  t.is(r.code, 1);
  const report = JSON.parse(r.stdout) as { ok: boolean; checks: { name: string; status: string; files?: string[]; fix?: string }[] };
  t.false(report.ok);
  const perms = report.checks.find((c) => c.name === 'permissions');
  t.is(perms?.status, 'fail');
  t.deepEqual(perms?.files, [join(dir, 'instances.json')]);
  t.regex(perms?.fix ?? '', /chmod/);
});

test('doctor on a missing data dir exits 1 and says to run init', async (t) => {
  const root = await tempDir('gw-doctor-e2e-');
  made.push(root);
  const r = await runCli(['doctor'], { dataDir: join(root, 'missing') });
  t.is(r.code, 1);
  t.regex(r.stdout, /FAIL\s+data-dir/);
  t.regex(r.stdout, /gateway init/);
});

test('doctor fails when WhatsApp cannot be reached, naming the cause (DNS, refused connection)', async (t) => {
  // Rule guarded (issue 12): an instance with no route to WhatsApp only retries; doctor said "All
  // checks passed". It must fail the whatsapp check with the cause and exit 1.
  const dir = await initialised();
  const setUrl = async (url: string) => {
    const config = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8')) as { baileys: Record<string, unknown> };
    config.baileys.webSocketUrl = url;
    await writeFile(join(dir, 'config.json'), JSON.stringify(config));
  };
  // `.invalid` never resolves (RFC 6761).
  await setUrl('wss://web.whatsapp.invalid/ws/chat');
  let r = await runCli(['doctor'], { dataDir: dir });
  t.is(r.code, 1, r.stdout + r.stderr);
  t.regex(r.stdout, /FAIL\s+whatsapp\b.*cannot resolve web\.whatsapp\.invalid \((ENOTFOUND|EAI_AGAIN)\)/);
  t.notRegex(r.stdout, /All checks passed/);
  // A port where nothing listens: the connection is refused.
  await setUrl(`ws://127.0.0.1:${await freePort()}/ws/chat`);
  r = await runCli(['doctor', '--json'], { dataDir: dir });
  t.is(r.code, 1);
  const whatsapp = (JSON.parse(r.stdout) as { checks: { name: string; status: string; message: string }[] }).checks.find((c) => c.name === 'whatsapp');
  t.is(whatsapp?.status, 'fail');
  t.regex(whatsapp?.message ?? '', /ECONNREFUSED/);
});
