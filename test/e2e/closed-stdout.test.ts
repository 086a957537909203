import test from 'ava';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GATEWAY_BIN, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/daemon.js';

/**
 * Rule guarded: a closed stdout (`gateway start | head -1`, `| tee log` then Ctrl-C) never hangs or
 * crashes the daemon; logging stops quietly and SIGTERM/SIGINT still exit 0 within seconds.
 */
async function runWithClosedStdout(signal: NodeJS.Signals, trafficAfterClose: boolean): Promise<{ code: number | string; ms: number; stderr: string }> {
  const dir = join(await tempDir(), 'data');
  const init = await runCli(['init', '--yes'], { dataDir: dir });
  if (init.code !== 0) throw new Error(`init failed: ${init.stderr}`);
  const child = spawn(process.execPath, [GATEWAY_BIN, 'start', '--data-dir', dir, '--port', '0'], {
    env: { ...process.env, CI: 'true' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, sig) => resolve(code ?? sig ?? -1)));
  try {
    // Read the first log line, then close our end of the pipe as `head -1` does.
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`no log line within 15 s: ${stderr}`)), 15_000);
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    child.stdout.destroy();
    const info = JSON.parse(await readFile(join(dir, 'daemon.json'), 'utf8')) as { port: number };
    if (trafficAfterClose) {
      // Requests log lines; the batching timer then meets EPIPE before the signal does.
      for (let i = 0; i < 20; i++) await fetch(`http://127.0.0.1:${info.port}/api/inst_nonexistent/status`);
      await new Promise((r) => setTimeout(r, 600));
    }
    const started = Date.now();
    child.kill(signal);
    const deadline = new Promise<'hung'>((r) => setTimeout(() => r('hung'), 8_000).unref());
    const code = await Promise.race([exited, deadline]);
    return { code, ms: Date.now() - started, stderr };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

test('SIGTERM right after stdout closed: the exit flush meets EPIPE and the daemon still exits 0', async (t) => {
  const r = await runWithClosedStdout('SIGTERM', false);
  t.log(`exited ${r.code} ${r.ms} ms after SIGTERM`);
  t.is(r.code, 0, r.stderr);
  t.true(r.ms < 5_000);
});

test('SIGINT after logging into a closed stdout for a while: no crash, exit 0', async (t) => {
  const r = await runWithClosedStdout('SIGINT', true);
  t.log(`exited ${r.code} ${r.ms} ms after SIGINT`);
  t.is(r.code, 0, r.stderr);
  t.true(r.ms < 5_000);
  t.notRegex(r.stderr, /EPIPE|Unhandled|Error:/, 'stderr stays quiet');
});
