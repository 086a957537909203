import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DAEMON_NODE_FLAGS } from '../src/daemon/node-flags.js';

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

// ---- the client's view: load from bench/load.ts, webhooks received by bench/webhook-receiver.ts,
// each in its own process ------------------------------------------------------------------------

export interface LoadSpec {
  kind: 'send' | 'inbound';
  url: string;
  headers?: Record<string, string>;
  connections: number;
  /** Run for this long... */
  seconds?: number;
  /** ...or send exactly this many (a burst). */
  amount?: number;
  /** Requests per second over all connections (absent: as fast as answered). */
  rate?: number;
  /** `send`: distinct recipients. */
  phones?: number;
  /** `inbound`: distinct senders (chats). */
  chats?: number;
}

export interface LoadReport {
  rps: number;
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  errors: number;
  startedAt: number;
  firstAcceptedAt: number;
}


const LOAD = fileURLToPath(new URL('./load.ts', import.meta.url));
const RECEIVER = fileURLToPath(new URL('./webhook-receiver.ts', import.meta.url));

/** bench/load.ts in its own process: autocannon with a body per request (varied phones or chats). */
export function runLoad(spec: LoadSpec): Promise<LoadReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import=tsx', LOAD, JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out) as LoadReport) : reject(new Error(`load (${spec.kind}) exited ${code}`))));
  });
}

/** What bench/webhook-receiver.ts counted since its last reset (times are wall clock, ms). */
export interface ReceiverStats {
  /** message.received events, duplicates included. */
  received: number;
  /** Distinct message texts. */
  unique: number;
  firstAt: number;
  lastAt: number;
  /** Signed deliveries whose signature did not verify (must be 0). */
  badSignatures: number;
  /** With `detail`, per event whose text carries the client's send time (`chat:n:sentAtMs`): receipt minus send, ms. */
  latencies: number[];
  /** With `detail`: each distinct text once, in order of first receipt, with its count. */
  texts?: Array<[string, number]>;
}

export interface Receiver {
  /** Listens (on `port`, or a free one) and returns the port. */
  listen(port?: number): Promise<number>;
  close(): Promise<void>;
  reset(): Promise<void>;
  stats(detail?: boolean): Promise<ReceiverStats>;
  stop(): Promise<void>;
}

/** The webhook receiver in its own process, driven over IPC; `secret`: verify every signature with it. */
export async function startReceiver(secret: string | null): Promise<Receiver> {
  const child = spawn(process.execPath, ['--import=tsx', RECEIVER, secret ?? ''], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let next = 1;
  const pending = new Map<number, (value: unknown) => void>();
  child.on('message', (m: { id: number; value: unknown }) => {
    pending.get(m.id)?.(m.value);
    pending.delete(m.id);
  });
  const call = <T>(cmd: string, arg?: unknown): Promise<T> =>
    new Promise((resolve) => {
      const id = next++;
      pending.set(id, resolve as (value: unknown) => void);
      child.send({ id, cmd, arg });
    });
  await call('ping');
  return {
    listen: (port) => call<number>('listen', port ?? 0),
    close: () => call<void>('close'),
    reset: () => call<void>('reset'),
    stats: (detail = false) => call<ReceiverStats>('stats', detail),
    stop: () => stop(child),
  };
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

/**
 * Where the daemon's log (its stdout) goes: `ignore` (/dev/null), `file` (daemon-stdout.log in its
 * data dir, as `gateway start >> file`), `pipe` (read and dropped by the bench, as a supervisor
 * such as journald reads it).
 */
export type DaemonStdout = 'ignore' | 'file' | 'pipe';

/** The built daemon as `npm run bench` runs it: BENCH_NODE_ARGS passed to node (e.g. --cpu-prof), log level info, its log to a file (BENCH_DAEMON_STDOUT). */
export function startGateway(bin: string, dataDir: string): Promise<DaemonProc> {
  // A client's daemon logs somewhere: to a file by default, not /dev/null.
  const stdout = (process.env.BENCH_DAEMON_STDOUT ?? 'file') as DaemonStdout;
  return startDaemon(bin, dataDir, { nodeArgs: process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : [], logLevel: 'info', stdout });
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

// ---- helpers for bench/sessions.ts: a daemon with extra env and node flags, its heap through the
// inspector, CPU time from /proc, Prometheus gauges --------------------------------------------

/** `gateway init` in a new temp dir, then `patch` applied to its config.json; returns the dir and the server secret. */
export async function initDataDir(bin: string, patch: (config: Record<string, any>) => void = () => undefined): Promise<{ dataDir: string; secret: string }> { // eslint-disable-line @typescript-eslint/no-explicit-any -- config JSON
  const { mkdtemp } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-bench-'));
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, [bin, '--data-dir', dataDir, 'init', '--yes', '--json'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    child.on('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`init exited ${code}`))));
  });
  const secret = (JSON.parse(out) as { serverSecret: string }).serverSecret;
  await patchConfig(dataDir, patch);
  return { dataDir, secret };
}

/** Changes a data dir's config.json (the daemon reads it at its next start). */
export async function patchConfig(dataDir: string, patch: (config: Record<string, any>) => void): Promise<void> { // eslint-disable-line @typescript-eslint/no-explicit-any -- config JSON
  const { writeFile } = await import('node:fs/promises');
  const file = join(dataDir, 'config.json');
  const config = JSON.parse(await readFile(file, 'utf8'));
  patch(config);
  await writeFile(file, JSON.stringify(config, null, 2));
}

export interface DaemonProc extends Proc {
  startupMs: number;
  /** When the process was spawned (performance.now()). */
  spawnedAt: number;
  /** The inspector's WebSocket URL when started with `inspect`. */
  inspectorUrl: string | null;
  /** Everything the daemon wrote to stderr, newest last (bounded). */
  stderr(): string;
}

/**
 * The built daemon as a child process, launched as systemd/gateway.service launches it (its node
 * flags, DAEMON_NODE_FLAGS), with extra environment and node flags (`--inspect=127.0.0.1:0` with
 * `inspect`); a flag in `nodeArgs` wins over the same flag turned the other way (`--memory-reducer`).
 */
export async function startDaemon(bin: string, dataDir: string, options: { env?: Record<string, string>; nodeArgs?: string[]; inspect?: boolean; logLevel?: string; stdout?: DaemonStdout } = {}): Promise<DaemonProc> {
  const spawnedAt = performance.now();
  const args = [...DAEMON_NODE_FLAGS, ...(options.nodeArgs ?? []), ...(options.inspect ? ['--inspect=127.0.0.1:0'] : []), bin, '--data-dir', dataDir, 'start', '--port', '0', '--log-level', options.logLevel ?? 'warn'];
  const out = options.stdout ?? 'ignore';
  const fd = out === 'file' ? openSync(join(dataDir, 'daemon-stdout.log'), 'a') : null;
  const stdoutIo: number | 'ignore' | 'pipe' = fd ?? (out === 'pipe' ? 'pipe' : 'ignore');
  const child: ChildProcess = spawn(process.execPath, args, { env: { ...process.env, ...options.env }, stdio: ['ignore', stdoutIo, 'pipe'] });
  if (fd !== null) closeSync(fd);
  // Read and dropped, as a supervisor reading the daemon's log would (without parsing it).
  if (out === 'pipe') child.stdout!.resume();
  let err = '';
  let inspectorUrl: string | null = null;
  child.stderr!.on('data', (d: Buffer) => {
    err = (err + d.toString()).slice(-200_000);
    if (process.env.BENCH_TEE_STDERR) process.stderr.write(d);
    inspectorUrl ??= /Debugger listening on (ws:\/\/\S+)/.exec(err)?.[1] ?? null;
  });
  for (;;) {
    try {
      const info = JSON.parse(await readFile(join(dataDir, 'daemon.json'), 'utf8')) as { pid: number; port: number };
      if (info.pid === child.pid && info.port > 0) {
        const res = await fetch(`http://127.0.0.1:${info.port}/healthz`);
        if (res.ok && (!options.inspect || inspectorUrl)) {
          return { child, port: info.port, spawnedAt, startupMs: Math.round(performance.now() - spawnedAt), inspectorUrl, stderr: () => err, stop: () => stop(child) };
        }
      }
    } catch {
      // not yet
    }
    if (child.exitCode !== null) throw new Error(`gateway exited during start: ${err.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface CdpSocket {
  send(data: string): void;
  close(): void;
  on(event: 'message', listener: (data: Buffer) => void): void;
  once(event: 'open' | 'error', listener: (err?: Error) => void): void;
}

/** A minimal Chrome DevTools Protocol client (the `ws` package Baileys brings): GC, heap figures, heap snapshots. */
export class Inspector {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>(); // eslint-disable-line @typescript-eslint/no-explicit-any -- CDP results
  private readonly listeners = new Map<string, (params: any) => void>(); // eslint-disable-line @typescript-eslint/no-explicit-any -- CDP events

  private constructor(private readonly socket: CdpSocket) {
    socket.on('message', (data) => {
      const msg = JSON.parse(data.toString()) as { id?: number; result?: unknown; error?: { message: string }; method?: string; params?: unknown };
      if (msg.id !== undefined) {
        const p = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        if (msg.error) p?.reject(new Error(msg.error.message));
        else p?.resolve(msg.result);
      } else if (msg.method) this.listeners.get(msg.method)?.(msg.params);
    });
  }

  static async connect(url: string): Promise<Inspector> {
    const WebSocket = require('ws') as new (url: string, options: { maxPayload: number }) => CdpSocket;
    const socket = new WebSocket(url, { maxPayload: 2 ** 31 - 1 });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', (e) => reject(e ?? new Error('inspector connection failed')));
    });
    return new Inspector(socket);
  }

  send<T = any>(method: string, params: Record<string, unknown> = {}): Promise<T> { // eslint-disable-line @typescript-eslint/no-explicit-any -- CDP results
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }

  /**
   * process.memoryUsage() of the inspected process after a full GC (twice: weak callbacks run in
   * between), with the heaps of its worker threads (session threads, `baileys.sessionThreads`)
   * collected the same way and added to `heapUsed`, `heapTotal` and `external`.
   */
  async memoryAfterGc(): Promise<{ rss: number; heapTotal: number; heapUsed: number; external: number; arrayBuffers: number }> {
    const workers = await this.workerSessions();
    const targets: Array<(method: string, params?: Record<string, unknown>) => Promise<any>> = [(m, p) => this.send(m, p), ...workers.map((w) => (m: string, p?: Record<string, unknown>) => this.sendToWorker(w, m, p))]; // eslint-disable-line @typescript-eslint/no-explicit-any -- CDP results
    await Promise.all(targets.map((t) => t('HeapProfiler.collectGarbage')));
    await new Promise((r) => setTimeout(r, 200));
    await Promise.all(targets.map((t) => t('HeapProfiler.collectGarbage')));
    const all = await Promise.all(
      targets.map(async (t) => {
        const r = await t('Runtime.evaluate', { expression: 'JSON.stringify(process.memoryUsage())', returnByValue: true });
        return JSON.parse(r.result.value) as { rss: number; heapTotal: number; heapUsed: number; external: number; arrayBuffers: number };
      }),
    );
    const main = all[0]!;
    for (const w of all.slice(1)) {
      main.heapUsed += w.heapUsed;
      main.heapTotal += w.heapTotal;
      main.external += w.external;
    }
    return main;
  }

  private workerIds: Set<string> | null = null;

  /** The inspector sessions of the process's worker threads (NodeWorker domain), attached on first use. */
  private async workerSessions(): Promise<string[]> {
    if (!this.workerIds) {
      const ids = new Set<string>();
      this.workerIds = ids;
      this.listeners.set('NodeWorker.attachedToWorker', (p: { sessionId: string }) => ids.add(p.sessionId));
      this.listeners.set('NodeWorker.detachedFromWorker', (p: { sessionId: string }) => ids.delete(p.sessionId));
      this.listeners.set('NodeWorker.receivedMessageFromWorker', (p: { message: string }) => {
        const msg = JSON.parse(p.message) as { id?: number; result?: unknown; error?: { message: string } };
        if (msg.id === undefined) return;
        const waiting = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        if (msg.error) waiting?.reject(new Error(msg.error.message));
        else waiting?.resolve(msg.result);
      });
      await this.send('NodeWorker.enable', { waitForDebuggerOnStart: false });
      await new Promise((r) => setTimeout(r, 200));
    }
    return [...this.workerIds];
  }

  private sendToWorker<T = any>(sessionId: string, method: string, params: Record<string, unknown> = {}): Promise<T> { // eslint-disable-line @typescript-eslint/no-explicit-any -- CDP results
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      void this.send('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify({ id, method, params }) }).catch(reject);
    });
  }

  /** Writes a .heapsnapshot of the inspected process (for DevTools' Memory tab). */
  async heapSnapshot(file: string): Promise<void> {
    const { createWriteStream } = await import('node:fs');
    const out = createWriteStream(file);
    this.listeners.set('HeapProfiler.addHeapSnapshotChunk', (p: { chunk: string }) => out.write(p.chunk));
    await this.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    this.listeners.delete('HeapProfiler.addHeapSnapshotChunk');
    await new Promise<void>((resolve) => out.end(resolve));
  }

  close(): void {
    this.socket.close();
  }
}

/** CPU seconds (user + system) a process used so far, from /proc (clock ticks of 1/100 s on Linux). */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * fetch() that tries a GET again (up to 3 times) when the connection failed: on a machine loaded
 * enough to stall event loops for seconds, undici may reuse a keep-alive socket the daemon has just
 * closed (its keepAliveTimeout is 5 s), and a bench should not die of that. Other methods are not
 * retried (a create might have happened).
 */
export async function fetchRetry(url: string, init: RequestInit = {}): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch(url, init);
    } catch (err) {
      if ((init.method ?? 'GET') !== 'GET' || attempt >= 3) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** The value of one Prometheus sample (`name{labels}`), or 0 if absent. */
export function promValue(text: string, sample: string): number {
  for (const line of text.split('\n')) if (line.startsWith(`${sample} `)) return Number(line.slice(sample.length + 1));
  return 0;
}
