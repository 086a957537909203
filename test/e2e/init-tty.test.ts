import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GATEWAY_BIN } from '../helpers/cli.js';
import { tempDir, waitFor } from '../helpers/daemon.js';
import { terminalTest } from '../helpers/terminal.js';

// util-linux `script` gives the CLI a real pseudo-terminal, so @inquirer/prompts asks its questions.
const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

terminalTest('init on a terminal asks host, port and webhook policy', async (t) => {
  const dir = join(await tempDir(), 'data');
  const command = [process.execPath, GATEWAY_BIN, '--data-dir', dir, 'init'].map(quote).join(' ');
  const child = spawn('script', ['-qefc', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  try {
    await waitFor(() => out.includes('Address to listen on'), 15_000, `the host question; ${out}`);
    child.stdin.write('\x15127.0.0.2\r'); // Ctrl-U clears the default first
    await waitFor(() => out.includes('Port'), 15_000, 'the port question');
    child.stdin.write('\x159191\r');
    await waitFor(() => out.includes('Allow webhooks'), 15_000, 'the webhook question');
    child.stdin.write('y\r');
    t.is(await exited, 0, out);
    t.regex(out, /Server secret \(X-API-Secret, shown once, store it now\): gw_secret_/);
    const config = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'));
    t.is(config.host, '127.0.0.2');
    t.is(config.port, 9191);
    t.true(config.webhooks.allowPrivateTargets);
  } finally {
    child.kill('SIGKILL');
  }
});

// Guards issue 12: "Ctrl-C in `init` prints an inquirer stack message". It exits 130, quietly.
terminalTest('Ctrl-C at an init question exits 130 with one line and no stack, writing nothing', async (t) => {
  const dir = join(await tempDir(), 'data');
  const command = [process.execPath, GATEWAY_BIN, '--data-dir', dir, 'init'].map(quote).join(' ');
  const child = spawn('script', ['-qefc', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  try {
    await waitFor(() => out.includes('Address to listen on'), 15_000, `the host question; ${out}`);
    child.stdin.write('\x03'); // Ctrl-C on the terminal
    t.is(await exited, 130, out);
    t.notRegex(out, /\n\s+at /, 'no stack trace');
    t.notRegex(out, /ExitPromptError|User force closed/);
    await t.throwsAsync(readFile(join(dir, 'config.json'), 'utf8'), { code: 'ENOENT' });
  } finally {
    child.kill('SIGKILL');
  }
});
