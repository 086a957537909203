import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GATEWAY_BIN } from './cli.js';

export interface ChildDaemon {
  child: ChildProcess;
  url: string;
  port: number;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>;
  kill(signal?: NodeJS.Signals): void;
}

/** Every daemon this test file started: a test that fails half-way must not leave one running. */
const started = new Set<ChildProcess>();
test.after.always('kill the child daemons a failed test left behind', () => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** Runs the built `gateway start` as a real child process on an ephemeral port. */
export async function startChildDaemon(dataDir: string, extraArgs: string[] = [], env: Record<string, string> = {}): Promise<ChildDaemon> {
  const child = spawn(process.execPath, [GATEWAY_BIN, '--data-dir', dataDir, 'start', '--port', '0', ...extraArgs], {
    env: { ...process.env, CI: 'true', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.add(child);
  child.once('exit', () => started.delete(child));
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  let done = false;
  void exited.then(() => (done = true));
  const until = Date.now() + 60_000; // generous: a loaded machine starts slowly
  for (;;) {
    if (done) throw new Error(`daemon exited early: ${err || out}`);
    try {
      const info = JSON.parse(await readFile(join(dataDir, 'daemon.json'), 'utf8')) as { pid: number; port: number };
      if (info.pid === child.pid) {
        const url = `http://127.0.0.1:${info.port}`;
        const res = await fetch(`${url}/healthz`);
        if (res.ok) {
          return { child, url, port: info.port, stdout: () => out, stderr: () => err, exited, kill: (s = 'SIGTERM') => void child.kill(s) };
        }
      }
    } catch {
      // not up yet
    }
    if (Date.now() > until) {
      child.kill('SIGKILL');
      throw new Error(`daemon did not become healthy: ${err || out}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}
