import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const GATEWAY_BIN = fileURLToPath(new URL('../../bin/gateway', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built `gateway` as a child process (run `npm run build` first; `npm test` does). */
export function runCli(args: string[], options: { dataDir?: string; env?: Record<string, string>; input?: string } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [GATEWAY_BIN, ...(options.dataDir ? ['--data-dir', options.dataDir] : []), ...args], {
      env: { ...process.env, CI: 'true', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** A data dir initialised by `gateway init --yes` in a fresh temp dir. */
export async function initialisedDataDir(): Promise<string> {
  const { tempDir } = await import('./daemon.js');
  const { join } = await import('node:path');
  const dir = join(await tempDir(), 'data');
  const r = await runCli(['init', '--yes', '--json'], { dataDir: dir });
  if (r.code !== 0) throw new Error(r.stderr);
  return dir;
}
