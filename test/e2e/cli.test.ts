import test from 'ava';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { initialisedDataDir, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/daemon.js';

const initialised = initialisedDataDir;

test('init --yes takes defaults, prints the secret once, stores only its hash, 0700/0600', async (t) => {
  const dir = join(await tempDir(), 'data');
  const r = await runCli(['init', '--yes', '--json', '--port', '9090'], { dataDir: dir });
  t.is(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  t.regex(out.serverSecret, /^gw_secret_/);
  t.is(out.host, '127.0.0.1');
  t.is(out.port, 9090);
  t.is(out.dataDir, dir);
  const config = await readFile(join(dir, 'config.json'), 'utf8');
  t.false(config.includes(out.serverSecret));
  t.regex(config, /"serverSecretHash": "sha256:[0-9a-f]{64}"/);
  t.is((await stat(dir)).mode & 0o777, 0o700);
  t.is((await stat(join(dir, 'config.json'))).mode & 0o777, 0o600);
});

test('init without a TTY takes defaults; a second init refuses unless --force', async (t) => {
  const dir = join(await tempDir(), 'data');
  t.is((await runCli(['init'], { dataDir: dir })).code, 0);
  const again = await runCli(['init', '--yes'], { dataDir: dir });
  t.not(again.code, 0);
  t.regex(again.stderr, /already initialised.*--force/);
  t.is(again.stderr.trim().split('\n').length, 1, 'one line');
  const forced = await runCli(['init', '--yes', '--force', '--json'], { dataDir: dir });
  t.is(forced.code, 0);
});

test('instance create / list / show / delete with --json and exit codes', async (t) => {
  const dir = await initialised();
  const created = await runCli(['instance', 'create', '--sandbox', '--name', 'shop', '--owner', 'acme', '--credits', '5', '--json'], { dataDir: dir });
  t.is(created.code, 0, created.stderr);
  const c = JSON.parse(created.stdout);
  t.regex(c.instanceId, /^inst_/);
  t.regex(c.apiKey, /^gw_live_/);
  t.is(c.credits, 5);
  t.false(c.premium, 'a sandbox never takes the owner\'s trial');

  const list = JSON.parse((await runCli(['instance', 'list', '--json'], { dataDir: dir })).stdout);
  t.is(list.instances.length, 1);
  t.false(JSON.stringify(list).includes(c.apiKey), 'keys are never shown again');

  const show = await runCli(['instance', 'show', c.instanceId, '--json'], { dataDir: dir });
  t.like(JSON.parse(show.stdout), { instanceId: c.instanceId, name: 'shop', owner: 'acme', sandbox: true });

  const missing = await runCli(['instance', 'show', 'inst_nope123', '--json'], { dataDir: dir });
  t.is(missing.code, 4);
  t.regex(missing.stderr, /^gateway: no instance with id "inst_nope123"\n$/);

  t.is((await runCli(['instance', 'delete', c.instanceId, '--yes'], { dataDir: dir })).code, 0);
  t.is((await runCli(['instance', 'show', c.instanceId], { dataDir: dir })).code, 4);
  await t.throwsAsync(stat(join(dir, 'credits', `${c.instanceId}.json`)));
  await t.throwsAsync(stat(join(dir, 'credits', `${c.instanceId}.jsonl`)));
});

test('key rotate, credits add and premium grant', async (t) => {
  const dir = await initialised();
  const c = JSON.parse((await runCli(['instance', 'create', '--json'], { dataDir: dir })).stdout);
  const rotated = JSON.parse((await runCli(['key', 'rotate', c.instanceId, '--json'], { dataDir: dir })).stdout);
  t.is(rotated.instanceId, c.instanceId);
  t.not(rotated.apiKey, c.apiKey);
  const credits = JSON.parse((await runCli(['credits', 'add', c.instanceId, '7', '--json'], { dataDir: dir })).stdout);
  t.is(credits.credits, 7);
  const premium = JSON.parse((await runCli(['premium', 'grant', c.instanceId, '--days', '3', '--json'], { dataDir: dir })).stdout);
  t.true(premium.premium);
  t.is((await runCli(['credits', 'add', c.instanceId, '-1'], { dataDir: dir })).code, 2);
  t.is((await runCli(['credits', 'add', c.instanceId, 'abc'], { dataDir: dir })).code, 2);
  t.is((await runCli(['premium', 'grant', c.instanceId], { dataDir: dir })).code, 2);
  t.is((await runCli(['nonsense'], { dataDir: dir })).code, 2);
});

test('commands on an uninitialised data dir fail clearly', async (t) => {
  const dir = join(await tempDir(), 'none');
  const r = await runCli(['instance', 'list'], { dataDir: dir });
  t.is(r.code, 2, 'CONFIG_INVALID: a missing config is an unusable config (README, exit codes)');
  t.regex(r.stderr, /is not initialised: run "gateway init" first/);
});

test('8 parallel instance create processes leave exactly 8 instances', async (t) => {
  const dir = await initialised();
  const runs = await Promise.all(Array.from({ length: 8 }, (_, i) => runCli(['instance', 'create', '--name', `p${i}`, '--json'], { dataDir: dir })));
  t.true(runs.every((r) => r.code === 0), runs.map((r) => r.stderr).join(''));
  const ids = new Set(runs.map((r) => JSON.parse(r.stdout).instanceId));
  t.is(ids.size, 8);
  const list = JSON.parse((await runCli(['instance', 'list', '--json'], { dataDir: dir })).stdout);
  t.is(list.instances.length, 8);
  t.is(runs.filter((r) => JSON.parse(r.stdout).premium).length, 1, 'one trial for the shared default owner');
});

test('a corrupt store is refused by CLI writes and left unchanged', async (t) => {
  const dir = await initialised();
  const file = join(dir, 'instances.json');
  const torn = '{"version":1,"instances":{"inst_abcdefgh":{"id":';
  await writeFile(file, torn);
  const r = await runCli(['instance', 'create'], { dataDir: dir });
  t.is(r.code, 3);
  t.is(r.stderr.trim().split('\n').length, 1);
  t.true(r.stderr.includes(file));
  t.is(await readFile(file, 'utf8'), torn);
});

test('an invalid config.json is refused with the key path', async (t) => {
  const dir = await initialised();
  const config = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'));
  config.webhooks.timeoutMs = 'soon';
  config.extra = 1;
  await writeFile(join(dir, 'config.json'), JSON.stringify(config));
  const r = await runCli(['instance', 'list'], { dataDir: dir });
  t.is(r.code, 2);
  t.regex(r.stderr, /webhooks\.timeoutMs: expected a whole number/);
  t.regex(r.stderr, /extra: unknown key/);
});

test('credits add refuses bad amounts with a one-line reason, and balances past the maximum', async (t) => {
  const dir = await initialised();
  const c = JSON.parse((await runCli(['instance', 'create', '--json'], { dataDir: dir })).stdout);
  for (const bad of ['abc', '-5', '0', '9007199254740991']) {
    const r = await runCli(['credits', 'add', c.instanceId, bad], { dataDir: dir });
    t.is(r.code, 2, bad);
    t.regex(r.stderr, /\S/, `a reason for ${bad}`);
  }
  t.is((await runCli(['credits', 'add', c.instanceId, '1000000000000'], { dataDir: dir })).code, 0);
  const over = await runCli(['credits', 'add', c.instanceId, '1'], { dataDir: dir });
  t.is(over.code, 2);
  t.regex(over.stderr, /balance above/);
  t.is((await runCli(['instance', 'list'], { dataDir: dir })).code, 0, 'the store is still readable');
});
