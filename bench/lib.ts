import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const AUTOCANNON = require.resolve('autocannon/autocannon.js');

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  errors: number;
}

/** autocannon in its own process, so the load generator does not share our event loop. */
export async function autocannon(url: string, options: { connections: number; seconds: number; method?: string; body?: string; headers?: Record<string, string>; rate?: number }): Promise<LoadResult> {
  const args = [AUTOCANNON, '-j', '-n', '-c', String(options.connections), '-d', String(options.seconds), '-m', options.method ?? 'GET'];
  for (const [k, v] of Object.entries(options.headers ?? {})) args.push('-H', `${k}=${v}`);
  if (options.body !== undefined) args.push('-b', options.body);
  if (options.rate !== undefined) args.push('-R', String(options.rate));
  args.push(url);
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`autocannon exited ${code}`))));
  });
  const r = JSON.parse(out) as { requests: { average: number; total: number }; latency: { p50: number; p99: number }; non2xx: number; errors: number };
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, total: r.requests.total, non2xx: r.non2xx, errors: r.errors };
}

export interface Proc {
  child: ChildProcess;
  port: number;
  stop(): Promise<void>;
}

/** Resident set size of a process, in MiB, from /proc. */
export async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round((kb / 1024) * 10) / 10;
}

export async function startGateway(bin: string, dataDir: string): Promise<Proc & { startupMs: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [...(process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : []), bin, '--data-dir', dataDir, 'start', '--port', '0', '--log-level', 'info'], { stdio: ['ignore', 'ignore', 'inherit'] });
  for (;;) {
    try {
      const info = JSON.parse(await readFile(join(dataDir, 'daemon.json'), 'utf8')) as { pid: number; port: number };
      if (info.pid === child.pid && info.port > 0) {
        const res = await fetch(`http://127.0.0.1:${info.port}/healthz`);
        if (res.ok) {
          const startupMs = Math.round(performance.now() - started);
          return { child, port: info.port, startupMs, stop: () => stop(child) };
        }
      }
    } catch {
      // not yet
    }
    if (child.exitCode !== null) throw new Error('gateway exited during start');
    await new Promise((r) => setTimeout(r, 10));
  }
}

export function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
