/**
 * Guards issue 25 (operators managed from the CLI; a reseller refunds credits) and contract part 3
 * "First run": `gateway operator add|list|reset|remove` with and without a running daemon (the
 * one-time password printed once, `--json` as {name, role, password}); `gateway credits refund`;
 * the first `gateway start` off a terminal logs one JSON line with the panel URL, how to sign in
 * and the next command (never the secret), and every later start logs the panel URL once.
 */
import test from 'ava';
import { join } from 'node:path';
import { initialisedDataDir, runCli } from '../helpers/cli.js';
import { startChildDaemon } from '../helpers/child-daemon.js';
import { spawn } from 'node:child_process';
import { GATEWAY_BIN } from '../helpers/cli.js';
import { request, tempDir, waitFor } from '../helpers/daemon.js';
import { terminalTest } from '../helpers/terminal.js';

test('operator add (--json), list, reset, remove, without a daemon and through a running one', async (t) => {
  const dir = await initialisedDataDir();
  const made = await runCli(['instance', 'create', '--sandbox', '--name', 'shop', '--json'], { dataDir: dir });
  const id = JSON.parse(made.stdout).instanceId as string;

  const add = await runCli(['operator', 'add', 'bob', '--role', 'agent', '--instances', id, '--json'], { dataDir: dir });
  t.is(add.code, 0, add.stderr);
  const added = JSON.parse(add.stdout) as { name: string; role: string; password: string };
  t.deepEqual(Object.keys(added), ['name', 'role', 'password']);
  t.like(added, { name: 'bob', role: 'agent' });
  const human = await runCli(['operator', 'add', 'ann', '--role', 'admin'], { dataDir: dir });
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, /One-time password \(shown once, hand it over now\): [A-Za-z0-9_-]{24}\n/);
  const dup = await runCli(['operator', 'add', 'ann', '--role', 'admin'], { dataDir: dir });
  t.is(dup.code, 1);
  t.regex(dup.stderr, /^gateway: an operator ann exists already/);
  const badRole = await runCli(['operator', 'add', 'cy', '--role', 'boss'], { dataDir: dir });
  t.is(badRole.code, 2);

  const d = await startChildDaemon(dir);
  t.teardown(() => d.kill('SIGKILL'));
  // The panel's session route takes the password the CLI printed.
  const signIn = await request(d.url, 'POST', '/panel/api/session', { json: { operator: 'bob', password: added.password } });
  t.is(signIn.status, 201);
  t.like(signIn.body, { role: 'agent', operator: 'bob', instances: [{ instanceId: id, name: 'shop' }] });

  const list = await runCli(['operator', 'list', '--json'], { dataDir: dir });
  t.deepEqual(JSON.parse(list.stdout).operators.map((o: { name: string; role: string }) => [o.name, o.role]), [['ann', 'admin'], ['bob', 'agent']]);
  t.regex((await runCli(['operator', 'list'], { dataDir: dir })).stdout, /^ann {2}admin {2}every instance/m);

  const reset = await runCli(['operator', 'reset', 'bob', '--json'], { dataDir: dir });
  t.is(reset.code, 0, reset.stderr);
  const fresh = JSON.parse(reset.stdout).password as string;
  t.not(fresh, added.password);
  t.is((await request(d.url, 'POST', '/panel/api/session', { json: { operator: 'bob', password: added.password } })).status, 401);
  t.is((await request(d.url, 'POST', '/panel/api/session', { json: { operator: 'bob', password: fresh } })).status, 201);
  const removed = await runCli(['operator', 'remove', 'bob', '--json'], { dataDir: dir });
  t.deepEqual(JSON.parse(removed.stdout), { name: 'bob', deleted: true });
  t.is((await runCli(['operator', 'remove', 'bob'], { dataDir: dir })).code, 4);
  t.is((await request(d.url, 'POST', '/panel/api/session', { json: { operator: 'bob', password: fresh } })).status, 401);

  // Credits: added, then refunded down to zero; below that, refused.
  t.is((await runCli(['credits', 'add', id, '5'], { dataDir: dir })).code, 0);
  const refund = await runCli(['credits', 'refund', id, '5', '--json'], { dataDir: dir });
  t.is(refund.code, 0, refund.stderr);
  t.like(JSON.parse(refund.stdout), { instanceId: id, credits: 0 });
  const tooMuch = await runCli(['credits', 'refund', id, '1'], { dataDir: dir });
  t.is(tooMuch.code, 1);
  t.regex(tooMuch.stderr, /INSUFFICIENT|refund|credits/i);

  d.kill('SIGTERM');
  t.is(await d.exited, 0);
});

test('the first start off a terminal logs one JSON line: panel URL, how to sign in, the next command; later starts log the panel URL once', async (t) => {
  const dir = join(await tempDir(), 'data');
  const first = await startChildDaemon(dir);
  first.kill('SIGTERM');
  t.is(await first.exited, 0);
  const secret = /\n {2}(gw_secret_\S+)\n/.exec(first.stderr())?.[1];
  t.truthy(secret, 'the secret, once, on stderr');
  const lines = first.stdout().trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  const said = lines.filter((l) => l.firstRun !== undefined);
  t.is(said.length, 1);
  const run = said[0]!.firstRun as { panelUrl: string; signIn: string; next: string[] };
  t.is(run.panelUrl, `http://127.0.0.1:${first.port}/panel/`);
  t.regex(run.signIn, /server secret/);
  t.true(run.next.some((n) => n.startsWith('gateway instance create')));
  t.true(run.next.some((n) => n.includes('gateway pair')));
  t.false(first.stdout().includes(secret!), 'the log never holds the secret');

  const again = await startChildDaemon(dir);
  again.kill('SIGTERM');
  t.is(await again.exited, 0);
  const later = again.stdout().trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  t.is(later.filter((l) => l.firstRun !== undefined).length, 0);
  t.deepEqual(later.filter((l) => typeof l.panelUrl === 'string').map((l) => l.panelUrl), [`http://127.0.0.1:${again.port}/panel/`], 'the panel URL once');
  t.false(again.stderr().includes('gw_secret_'));
});

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

terminalTest('the first start on a terminal says, after the secret, the panel URL, how to sign in and the next command', async (t) => {
  const dir = join(await tempDir(), 'data');
  const command = [process.execPath, GATEWAY_BIN, '--data-dir', dir, 'start', '--port', '0'].map(quote).join(' ');
  const child = spawn('script', ['-qefc', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  try {
    await waitFor(() => out.includes('gateway pair'), 30_000, `the next command; ${out}`);
    const text = out.replace(/\r/g, '');
    const at = (s: string) => text.indexOf(s);
    t.true(at('gw_secret_') >= 0);
    t.true(at('Panel: http://127.0.0.1:') > at('gw_secret_'), 'after the secret');
    t.regex(text, /Panel: http:\/\/127\.0\.0\.1:\d+\/panel\/\n/);
    t.regex(text, /Sign in: open the panel and sign in with the server secret/);
    t.regex(text, /gateway instance create --name shop/);
  } finally {
    child.kill('SIGKILL');
  }
});
