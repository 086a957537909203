import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';

/**
 * Real proxies on loopback for tests, kept software rather than written here: Debian's
 * `tinyproxy` (HTTP CONNECT) and `microsocks` (SOCKS5), each started on an ephemeral port with
 * its own config in a temp dir, its log kept in memory. `.ci/run` installs both
 * (`apt-get install tinyproxy microsocks`).
 */
export interface RealProxy {
  /** `http://127.0.0.1:PORT` or `socks5://127.0.0.1:PORT`, without credentials. */
  readonly url: string;
  readonly port: number;
  /** What the proxy logged so far (stdout and stderr). */
  log(): string;
  /** Tunnels the proxy opened (or was asked for) to `target` ("127.0.0.1:PORT"), by its own log. */
  tunnelsTo(target: string): number;
  close(): Promise<void>;
}

const has = (bin: string): boolean => spawnSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' }).status === 0;
export const hasTinyproxy = has('tinyproxy');
export const hasMicrosocks = has('microsocks');

/**
 * Whether tests that need both proxies run. Without them they are skipped on a developer's machine
 * (`apt-get install tinyproxy microsocks`); in CI (CI=true) they run and fail, never pass silently.
 */
export const proxiesRun = (hasTinyproxy && hasMicrosocks) || process.env.CI === 'true';

/** `test.serial` for them (skipped where they do not run). */
export const proxySerial = proxiesRun ? test.serial : test.serial.skip;

/** A loopback port nothing listens on now (it was free a moment ago). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function run(name: string, args: string[], port: number, scheme: 'http' | 'socks5', tunnelLine: (target: string) => RegExp, dir: string | null): Promise<RealProxy> {
  const child: ChildProcess = spawn(name, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (b: Buffer) => (output += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (output += b.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let gone = false;
  void exited.then(() => (gone = true));
  child.once('error', (err) => (output += `\n${String(err)}`));
  const deadline = Date.now() + 5000;
  while (!(await accepts(port))) {
    if (gone || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${name} did not listen on 127.0.0.1:${port}: ${output.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `${scheme}://127.0.0.1:${port}`,
    port,
    log: () => output,
    tunnelsTo: (target) => output.split('\n').filter((line) => tunnelLine(target).test(line)).length,
    async close() {
      if (!gone) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
        await exited;
        clearTimeout(timer);
      }
      if (dir) await rm(dir, { recursive: true, force: true });
    },
  };
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** tinyproxy in the foreground (`-d`) with a config of its own; with `auth`, Basic credentials are required (407 otherwise). */
export async function startTinyproxy(options: { auth?: { user: string; password: string } } = {}): Promise<RealProxy> {
  if (!hasTinyproxy) throw new Error('tinyproxy is not installed (apt-get install tinyproxy)');
  const dir = await mkdtemp(join(tmpdir(), 'gw-tinyproxy-'));
  const port = await freePort();
  const config = [
    `Port ${port}`,
    'Listen 127.0.0.1',
    'Timeout 600',
    // Connect: each client and each request line (`CONNECT host:port`), nothing more.
    'LogLevel Connect',
    'MaxClients 100',
    'Allow 127.0.0.1',
    'DisableViaHeader Yes',
    // No ConnectPort line: CONNECT to any port (the double listens on ephemeral ones).
    ...(options.auth ? [`BasicAuth ${options.auth.user} ${options.auth.password}`] : []),
  ].join('\n');
  const file = join(dir, 'tinyproxy.conf');
  await writeFile(file, `${config}\n`);
  return run('tinyproxy', ['-d', '-c', file], port, 'http', (target) => new RegExp(`CONNECT ${escape(target)} HTTP/1\\.1`), dir);
}

/** microsocks on loopback; with `auth`, SOCKS5 user/password authentication is required. */
export async function startMicrosocks(options: { auth?: { user: string; password: string } } = {}): Promise<RealProxy> {
  if (!hasMicrosocks) throw new Error('microsocks is not installed (apt-get install microsocks)');
  const port = await freePort();
  const auth = options.auth ? ['-u', options.auth.user, '-P', options.auth.password] : [];
  // It logs each tunnel as `client[N] 127.0.0.1: connected to HOST:PORT`.
  return run('microsocks', ['-i', '127.0.0.1', '-p', String(port), ...auth], port, 'socks5', (target) => new RegExp(`connected to ${escape(target)}\\b`), null);
}
