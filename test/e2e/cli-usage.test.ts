/**
 * Guards issue 21 item 18 (the terminal):
 * - a mistyped command prints its one-line error and a hint (`run \`gateway --help\``), not 30
 *   lines of help burying it;
 * - every command's help shows --data-dir and --json (subcommand help left them out);
 * - `gateway instance delete` asks first on a terminal (as the panel does); without a terminal it
 *   refuses in one line unless --yes, instead of deleting silently.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { GATEWAY_BIN, initialisedDataDir, runCli } from '../helpers/cli.js';
import { waitFor } from '../helpers/daemon.js';
import { terminalTest } from '../helpers/terminal.js';

test('a mistyped command is one line and a hint, exit 2', async (t) => {
  const r = await runCli(['instnce', 'list']);
  t.is(r.code, 2);
  t.is(r.stdout, '');
  t.is(r.stderr, "gateway: unknown command 'instnce' (did you mean instance?)\nrun `gateway --help` for usage\n");
  const sub = await runCli(['instance', 'delete']);
  t.is(sub.code, 2);
  t.is(sub.stderr, "gateway: missing required argument 'id'\nrun `gateway instance delete --help` for usage\n");
  const json = await runCli(['nonsense', '--json']);
  t.is(json.code, 2);
  t.deepEqual(JSON.parse(json.stdout), { success: false, error: { code: 'USAGE', message: "unknown command 'nonsense'" } });
});

/** Every command path under `prefix`, read from the Commands section of its help. */
async function commandPaths(prefix: string[] = []): Promise<string[][]> {
  const help = (await runCli([...prefix, '--help'])).stdout;
  const section = /\nCommands:\n([\s\S]*?)(?:\n\n|$)/.exec(help)?.[1] ?? '';
  const names = section
    .split('\n')
    .map((l) => /^ {2}([a-z][\w-]*)/.exec(l)?.[1])
    .filter((n): n is string => n !== undefined && n !== 'help');
  const nested = await Promise.all(names.map((n) => commandPaths([...prefix, n])));
  return [...names.map((n) => [...prefix, n]), ...nested.flat()];
}

test('every command shows --data-dir and --json in its help', async (t) => {
  const paths = await commandPaths();
  t.true(paths.length > 25, paths.map((p) => p.join(' ')).join(', '));
  const missing: string[] = [];
  for (const path of paths) {
    const help = (await runCli([...path, '--help'])).stdout;
    if (!help.includes('--data-dir <dir>') || !/^ {2}--json\b/m.test(help)) missing.push(path.join(' '));
  }
  t.deepEqual(missing, []);
});

test('instance delete without a terminal refuses in one line unless --yes', async (t) => {
  const dataDir = await initialisedDataDir();
  const c = JSON.parse((await runCli(['instance', 'create', '--sandbox', '--json'], { dataDir })).stdout) as { instanceId: string };
  const refused = await runCli(['instance', 'delete', c.instanceId], { dataDir });
  t.is(refused.code, 2);
  t.is(refused.stderr, `gateway: instance delete ${c.instanceId}: not asked on a terminal, so nothing was deleted; pass --yes to delete without asking\n`);
  t.is((await runCli(['instance', 'show', c.instanceId], { dataDir })).code, 0, 'still there');
  const deleted = await runCli(['instance', 'delete', c.instanceId, '--yes'], { dataDir });
  t.is(deleted.code, 0, deleted.stderr);
  t.is((await runCli(['instance', 'show', c.instanceId], { dataDir })).code, 4, 'gone');
});

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

terminalTest('instance delete on a terminal asks first: no keeps it, yes deletes it', async (t) => {
  const dataDir = await initialisedDataDir();
  const c = JSON.parse((await runCli(['instance', 'create', '--sandbox', '--json'], { dataDir })).stdout) as { instanceId: string };
  const ask = async (answer: string): Promise<{ code: number | null; out: string }> => {
    const command = [process.execPath, GATEWAY_BIN, '--data-dir', dataDir, 'instance', 'delete', c.instanceId].map(quote).join(' ');
    const child = spawn('script', ['-qefc', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      await waitFor(() => out.includes(`Delete ${c.instanceId}?`), 15_000, `the question; ${out}`);
      child.stdin.write(`${answer}\r`);
      return { code: await exited, out };
    } finally {
      child.kill('SIGKILL');
    }
  };
  const no = await ask('n');
  t.is(no.code, 1, no.out);
  t.regex(no.out, /not confirmed; nothing was changed/);
  t.is((await runCli(['instance', 'show', c.instanceId], { dataDir })).code, 0, 'kept');
  const yes = await ask('y');
  t.is(yes.code, 0, yes.out);
  t.regex(yes.out, new RegExp(`Deleted instance ${c.instanceId}`));
  t.is((await runCli(['instance', 'show', c.instanceId], { dataDir })).code, 4, 'deleted');
});
