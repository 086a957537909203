import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { lstat, mkdtemp, rm, chmod } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { pino } from 'pino';
import { isInitialised, loadConfig, withEnvironment } from '../config/load.js';
import type { GatewayConfig, LogLevel } from '../config/schema.js';
import { GatewayError, errorMessage } from '../domain/errors.js';
import { ensureDir } from '../fs/atomic-write.js';
import { secureModes } from '../storage/files/modes.js';
import { storePaths } from '../storage/files/paths.js';
import { createDaemon, type Daemon, type DaemonParts } from './create-daemon.js';
import { dataDirHolder, lockDataDir, removeDaemonInfo, unlockDataDir, writeDaemonInfo, type HolderKind } from '../storage/files/data-dir-lock.js';
import { initialiseDataDir } from '../config/init.js';
import { createLogger } from './logger.js';

export interface DaemonOptions extends Partial<Omit<DaemonParts, 'dataDir' | 'config' | 'mode' | 'logger'>> {
  dataDir: string;
  /** Overrides of config.json (CLI flags). */
  host?: string;
  port?: number;
  logLevel?: LogLevel;
  logger?: Logger;
  /** Called with the secret when start initialised a fresh data dir. */
  onInitialised?: (serverSecret: string) => void;
  /** How long to wait for another gateway command holding the data dir (default 10 s). */
  lockWaitMs?: number;
}

export interface RunningDaemon {
  port: number;
  host: string;
  daemon: Daemon;
  server: Server;
  close(): Promise<void>;
}

/** Where a browser on this host finds the panel: a wildcard address is reached on the loopback. */
export function panelUrl(host: string, port: number): string {
  const h = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `http://${h}:${port}/panel/`;
}

/** Unix socket paths are limited to about 107 bytes. */
const MAX_SOCKET_PATH = 100;
/** How long an idle keep-alive connection is kept open (see where it is set). */
export const KEEP_ALIVE_MS = 65_000;

function listen(server: Server, ...args: [number, string] | [string]): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    const done = (): void => {
      server.off('error', reject);
      resolve();
    };
    if (args.length === 2) server.listen(args[0], args[1], done);
    else server.listen(args[0], done);
  });
}

/** The control socket: the same app, every request trusted (only our own user can open it). */
async function listenControl(daemon: Daemon, path: string): Promise<Server> {
  const callback = daemon.app.callback();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    daemon.control.trust(req);
    void callback(req, res);
  });
  server.keepAliveTimeout = 1_000;
  // A socket file left by a daemon that was killed; anything that is not a socket stays.
  const existing = await lstat(path).catch(() => null);
  if (existing && !existing.isSocket()) throw new Error(`${path} exists and is not a socket; remove it`);
  if (existing) await rm(path, { force: true });
  await listen(server, path);
  // The data dir is 0700 already; the socket itself is as private as the credentials next to it.
  await chmod(path, 0o600);
  return server;
}

async function closeServer(server: Server, graceMs: number): Promise<void> {
  await new Promise<void>((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    force.unref();
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}

function effectiveConfig(options: DaemonOptions): GatewayConfig {
  const loaded = withEnvironment(loadConfig(options.dataDir));
  return {
    ...loaded,
    host: options.host ?? loaded.host,
    port: options.port ?? loaded.port,
    logLevel: options.logLevel ?? loaded.logLevel,
  };
}

function partsOf(options: DaemonOptions): Partial<DaemonParts> {
  const { dataDir: _d, host: _h, port: _p, logLevel: _l, logger: _g, onInitialised: _o, lockWaitMs: _w, ...parts } = options;
  return parts;
}

/**
 * Starts the daemon: initialise a fresh data dir, take the data dir lock (the daemon is then the
 * only writer), build the daemon, open connections, listen on HTTP and on the control socket.
 */
export async function startDaemon(options: DaemonOptions): Promise<RunningDaemon> {
  const { dataDir } = options;
  await ensureDir(dataDir);
  // Another command's hold is short: wait for it; a running daemon or `gateway pair` is reported at once.
  const lock = await lockDataDir(dataDir, 'daemon', options.lockWaitMs ?? (dataDirHolder(dataDir)?.kind === 'cli' ? 10_000 : 0));
  if (!isInitialised(dataDir)) {
    try {
      const { serverSecret, shown } = await initialiseDataDir(dataDir, {}, false, lock);
      options.onInitialised?.(serverSecret);
      await shown();
    } catch (err) {
      await unlockDataDir(lock);
      throw err;
    }
  }
  const config = effectiveConfig(options);
  const logger = options.logger ?? createLogger(config.logLevel);
  lock.onLost((err) => {
    logger.fatal({ err: err.message }, 'the data dir lock was taken over while this daemon stalled; exiting without writing');
    process.exit(3);
  });
  let daemon: Daemon | null = null;
  try {
    const fixed = await secureModes(dataDir);
    if (fixed.length > 0) logger.warn({ count: fixed.length, first: fixed.slice(0, 5) }, 'the data dir was readable by other users; made it private again (directories 0700, files 0600)');
    daemon = await createDaemon({ ...partsOf(options), dataDir, config, mode: 'daemon', logger, guard: lock });
    await daemon.start();
    const server = createServer(daemon.app.callback());
    // An idle keep-alive connection stays open 65 s (Node's default is 5 s). A client reuses a
    // socket it believes open; when the server closes it in the same moment, the request fails with
    // ECONNRESET, not an answer (a bench run saw 4 such sends while 1,000 sessions kept the loops
    // busy). Clients and proxies keep idle sockets for less than 60 s (undici follows the
    // Keep-Alive hint minus 2 s, nginx and load balancers 60 s), so it is their side that closes.
    server.keepAliveTimeout = KEEP_ALIVE_MS;
    server.headersTimeout = 15_000;
    server.requestTimeout = 120_000;
    await listen(server, config.port, config.host);
    const port = (server.address() as AddressInfo).port;
    await daemon.listening({ host: config.host, port });
    const controlPath = storePaths(dataDir).controlSocket;
    let control: Server | null = null;
    if (controlPath.length <= MAX_SOCKET_PATH) {
      control = await listenControl(daemon, controlPath).catch((err: unknown) => {
        logger.error({ err: errorMessage(err), socketPath: controlPath }, 'control socket unavailable: the CLI cannot reach this daemon');
        return null;
      });
    } else {
      logger.error({ socketPath: controlPath }, 'the data dir path is too long for a control socket: the CLI cannot reach this daemon');
    }
    await writeDaemonInfo(dataDir, { pid: process.pid, host: config.host, port, startedAt: new Date().toISOString() }, lock);
    // The panel's address, once per start (issue 25: a newcomer should not have to guess it).
    logger.info({ host: config.host, port, instances: daemon.core.instances.size, dataDir, ...(config.panel.enabled ? { panelUrl: panelUrl(config.host, port) } : {}) }, 'gateway listening');

    const running = daemon;
    let closing: Promise<void> | null = null;
    const close = (): Promise<void> => {
      closing ??= (async () => {
        logger.info('shutting down: draining requests');
        running.closeStreams();
        await Promise.all([closeServer(server, 10_000), control ? closeServer(control, 1_000) : Promise.resolve()]);
        await rm(controlPath, { force: true }).catch(() => undefined);
        await running.stop();
        await removeDaemonInfo(dataDir).catch(() => undefined);
        await unlockDataDir(lock);
        logger.info('stopped');
      })();
      return closing;
    };
    return { port, host: config.host, daemon: running, server, close };
  } catch (err) {
    await daemon?.stop().catch(() => undefined);
    await unlockDataDir(lock);
    throw err;
  }
}

/** A daemon built inside a CLI command while no daemon runs, reachable on a private socket. */
export interface LocalDaemon {
  socketPath: string;
  daemon: Daemon;
  close(): Promise<void>;
}

/**
 * For a CLI command with no daemon running: takes the data dir lock (as `kind`), builds the daemon
 * offline (no connection opened unless a route asks, no delivery), and serves its routes on a
 * private socket, so the command goes through the same routes as with a daemon.
 */
export async function openLocalDaemon(options: { dataDir: string; kind: HolderKind; logger?: Logger; logoutTimeoutMs?: number; lockWaitMs?: number }): Promise<LocalDaemon> {
  const { dataDir } = options;
  if (!isInitialised(dataDir)) throw new GatewayError('CONFIG_INVALID', `${dataDir} is not initialised: run "gateway init" first`);
  const config = withEnvironment(loadConfig(dataDir));
  const logger = options.logger ?? pino({ level: 'warn', base: { pid: process.pid } }, pino.destination({ fd: 2, sync: true }));
  const lock = await lockDataDir(dataDir, options.kind, options.lockWaitMs ?? 30_000);
  let dir: string | null = null;
  try {
    const daemon = await createDaemon({ dataDir, config, mode: 'offline', logger, guard: lock, ...(options.logoutTimeoutMs !== undefined ? { logoutTimeoutMs: options.logoutTimeoutMs } : {}) });
    await daemon.start();
    dir = await mkdtemp(join(tmpdir(), 'gateway-cli-'));
    const socketPath = join(dir, 'control.sock');
    const server = await listenControl(daemon, socketPath);
    const tmp = dir;
    return {
      socketPath,
      daemon,
      async close() {
        await closeServer(server, 1_000);
        await daemon.stop();
        await rm(tmp, { recursive: true, force: true });
        await unlockDataDir(lock);
      },
    };
  } catch (err) {
    if (dir) await rm(dir, { recursive: true, force: true });
    await unlockDataDir(lock);
    throw err;
  }
}
