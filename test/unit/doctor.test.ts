import { createServer, type Server } from 'node:net';
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { readdirSync } from 'node:fs';
import { loadConfig, saveConfig } from '../../src/config/load.js';
import { compareVersions } from '../../src/doctor/node-version.js';
import { runDoctor, formatReport, type DoctorReport } from '../../src/doctor/index.js';
import { prepareDataDir, startTestDaemon, tempDir } from '../helpers/daemon.js';
import { UNGUARDED } from '../../src/fs/write-guard.js';

function listen(host = '127.0.0.1'): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, host, () => resolve({ server, port: (server.address() as { port: number }).port }));
  });
}

const made: string[] = [];

async function scratch(): Promise<string> {
  const dir = await tempDir('gw-doctor-');
  made.push(dir);
  return dir;
}

/** A free port now (bound, then released). */
async function freePort(): Promise<number> {
  const { server, port } = await listen();
  await new Promise((r) => server.close(r));
  return port;
}

/** Stands in for WhatsApp's server in the reachability check (a TCP listener on loopback). */
let whatsappStandIn: Promise<{ server: Server; port: number }> | null = null;

/** An initialised data dir on a free port with one instance and a credit file. */
async function goodDir(): Promise<string> {
  const dir = join(await scratch(), 'data');
  whatsappStandIn ??= listen().then((l) => {
    l.server.unref(); // never keeps the test process alive
    return l;
  });
  const { port: waPort } = await whatsappStandIn;
  await prepareDataDir(dir, { port: await freePort(), baileys: { webSocketUrl: `ws://127.0.0.1:${waPort}/ws/chat` } });
  const d = await startTestDaemon({ dataDir: dir });
  try {
    // startTestDaemon with its own dataDir has no secret: provision through the core directly.
    const { record } = await d.core.instances.create({ sandbox: true });
    await d.core.credits.add(record.id, 3);
  } finally {
    await d.close();
  }
  return dir;
}

const check = (report: DoctorReport, name: string) => {
  const c = report.checks.find((x) => x.name === name);
  if (!c) throw new Error(`no check ${name}`);
  return c;
};

test('a healthy data dir passes every check', async (t) => {
  const dir = await goodDir();
  const report = await runDoctor(dir);
  t.true(report.ok, formatReport(report));
  t.deepEqual(report.checks.map((c) => [c.name, c.status]), [
    ['node', 'ok'],
    ['baileys', 'ok'],
    ['data-dir', 'ok'],
    ['permissions', 'ok'],
    ['config', 'ok'],
    ['store', 'ok'],
    ['port', 'ok'],
    ['whatsapp', 'ok'],
    ['database', 'ok'],
  ]);
  t.regex(check(report, 'store').message, /1 credit file\(s\) load \(1 instance\(s\)\)/);
});

test('a missing data dir fails and skips what depends on it', async (t) => {
  const dir = join(await scratch(), 'nope');
  const report = await runDoctor(dir);
  t.false(report.ok);
  t.is(check(report, 'data-dir').status, 'fail');
  t.regex(check(report, 'data-dir').fix ?? '', /gateway init/);
  for (const name of ['permissions', 'config', 'store', 'port']) t.is(check(report, name).status, 'skip');
});

test('loose permissions are reported file by file', async (t) => {
  const dir = await goodDir();
  await chmod(join(dir, 'config.json'), 0o644);
  await chmod(join(dir, 'credits'), 0o755);
  const report = await runDoctor(dir);
  t.false(report.ok);
  const perms = check(report, 'permissions');
  t.is(perms.status, 'fail');
  t.regex(perms.message, /file config\.json is 0644, should be 0600/);
  t.regex(perms.message, /directory credits is 0755, should be 0700/);
  t.deepEqual(perms.files?.sort(), [join(dir, 'config.json'), join(dir, 'credits')].sort());
  t.regex(perms.fix ?? '', /chmod 700/);
});

test('a data dir open to others fails', async (t) => {
  const dir = await goodDir();
  await chmod(dir, 0o755);
  const perms = check(await runDoctor(dir), 'permissions');
  t.is(perms.status, 'fail');
  t.regex(perms.message, /directory \. is 0755/);
});

test('a corrupt instances.json is named', async (t) => {
  const dir = await goodDir();
  await writeFile(join(dir, 'instances.json'), '{"version":1,"instances":', { mode: 0o600 });
  const report = await runDoctor(dir);
  t.false(report.ok);
  const store = check(report, 'store');
  t.is(store.status, 'fail');
  t.true(store.message.includes(join(dir, 'instances.json')));
  t.deepEqual(store.files, [join(dir, 'instances.json')]);
  t.regex(store.fix ?? '', /backup/);
});

test('a corrupt credits file is named', async (t) => {
  const dir = await goodDir();
  const file = join(dir, 'credits', 'inst_abcdefgh.json');
  await writeFile(file, '{"balance":-5,"spent":0}', { mode: 0o600 });
  const store = check(await runDoctor(dir), 'store');
  t.is(store.status, 'fail');
  t.deepEqual(store.files, [file]);
});

// Guards issue 21 item 8: a credit journal emptied while stopped is corruption, not a balance of 0.
test('an emptied credit journal is named (it lost its head), and the daemon refuses to start on it', async (t) => {
  const dir = await goodDir();
  const name = readdirSync(join(dir, 'credits')).find((n) => n.endsWith('.jsonl'))!;
  t.truthy(name, 'the healthy dir has a credit journal');
  const file = join(dir, 'credits', name);
  await writeFile(file, '', { mode: 0o600 });
  const store = check(await runDoctor(dir), 'store');
  t.is(store.status, 'fail');
  t.deepEqual(store.files, [file]);
  t.regex(store.message, /empty/);
  const err = await t.throwsAsync(startTestDaemon({ dataDir: dir }));
  t.regex(err?.message ?? '', /empty/);
});

test('an unparsable auxiliary file is a warning, not a failure', async (t) => {
  const dir = await goodDir();
  await mkdir(join(dir, 'auth'), { recursive: true, mode: 0o700 });
  await writeFile(join(dir, 'auth', 'inst_abcdefgh.json'), '{oops', { mode: 0o600 });
  const report = await runDoctor(dir);
  t.true(report.ok);
  const store = check(report, 'store');
  t.is(store.status, 'warn');
  t.regex(store.message, /auth\/inst_abcdefgh\.json/);
});

test('an invalid config fails with the key named and skips the port check', async (t) => {
  const dir = await goodDir();
  const config = loadConfig(dir);
  await writeFile(join(dir, 'config.json'), JSON.stringify({ ...config, port: 'eighty', bogus: 1 }), { mode: 0o600 });
  const report = await runDoctor(dir);
  t.false(report.ok);
  t.regex(check(report, 'config').message, /port: expected a whole number/);
  t.regex(check(report, 'config').message, /bogus: unknown key/);
  t.is(check(report, 'port').status, 'skip');
});

test('a port held by another process fails; one held by our own daemon passes', async (t) => {
  const dir = await goodDir();
  const { server, port } = await listen();
  try {
    await saveConfig(dir, { ...loadConfig(dir), port }, UNGUARDED);
    const busy = check(await runDoctor(dir), 'port');
    t.is(busy.status, 'fail');
    t.regex(busy.message, new RegExp(`127\\.0\\.0\\.1:${port} is in use`));
    t.regex(busy.fix ?? '', /ss -ltnp/);
  } finally {
    await new Promise((r) => server.close(r));
  }
  const daemonPort = await freePort();
  await saveConfig(dir, { ...loadConfig(dir), port: daemonPort }, UNGUARDED);
  const d = await startTestDaemon({ dataDir: dir });
  try {
    // startTestDaemon listens on port 0; doctor must recognise the daemon by its lock, not the port.
    const held = check(await runDoctor(dir), 'port');
    t.is(held.status, 'ok');
    t.regex(held.message, /daemon for this data dir is running/);
  } finally {
    await d.close();
  }
});

test('an old Node fails the node check', async (t) => {
  const report = await runDoctor(join(await scratch(), 'nope'), { nodeVersion: '20.18.3' });
  t.is(check(report, 'node').status, 'fail');
  t.regex(check(report, 'node').message, /20\.18\.3 is too old/);
  t.is(check(await runDoctor('/nonexistent', { nodeVersion: '22.1.0' }), 'node').status, 'ok');
});

test('compareVersions compares numerically', (t) => {
  t.is(compareVersions('20.19.0', '20.19.0'), 0);
  t.is(compareVersions('v20.20.2', '20.19.0'), 1);
  t.is(compareVersions('20.9.0', '20.19.0'), -1);
  t.is(compareVersions('22.0.0', '20.19.0'), 1);
  t.is(compareVersions('18.20.4', '20.19.0'), -1);
});

test.after.always(async () => {
  await Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true })));
});

// Item 3 of issue 26 (no stall while phones pair) rests on patches/ being applied to Baileys at
// install (patch-package): doctor says whether it is, and what to run when it is not.
test('doctor says whether the installed Baileys carries the gateway patch, file by file, and what to run when it does not', async (t) => {
  const { checkBaileysPatch, baileysLibDir, PATCHED } = await import('../../src/doctor/baileys-patch.js');
  const installed = checkBaileysPatch();
  t.is(installed.status, 'ok', `this checkout's Baileys is patched by npm ci: ${installed.message}`);
  const { readFile, mkdir } = await import('node:fs/promises');
  // A copy of the patched files, each in turn without its part of the patch.
  for (const without of PATCHED) {
    const lib = await scratch();
    await mkdir(join(lib, 'Utils'));
    // One file may carry several parts (Utils/crypto.js): only `without`'s mark is taken out.
    for (const file of new Set(PATCHED.map((p) => p.file))) {
      const text = await readFile(join(baileysLibDir(), file), 'utf8');
      await writeFile(join(lib, file), file === without.file ? text.replaceAll(without.mark, 'undefined') : text);
    }
    const missing = checkBaileysPatch(lib);
    t.is(missing.status, 'warn');
    t.regex(missing.message, /without the gateway's patch/);
    t.true(missing.message.includes(without.what), missing.message);
    t.deepEqual(missing.files, [join(lib, without.file)]);
    t.regex(missing.fix ?? '', /npx patch-package/);
  }
  t.is(checkBaileysPatch(join(await scratch(), 'absent')).status, 'warn');
});
