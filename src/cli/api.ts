import type { Logger } from 'pino';
import { GatewayError } from '../domain/errors.js';
import { dataDirHolder, type HolderKind } from '../storage/files/data-dir-lock.js';
import { storePaths } from '../storage/files/paths.js';
import { callSocket, streamSocket, type LineStream } from './http-client.js';

/**
 * How a CLI command reaches the gateway: the running daemon's control socket (the daemon is then
 * the only writer of the data dir), or, with no daemon, a daemon built in this process that holds
 * the data dir lock meanwhile. Either way the command calls the same REST routes as everyone.
 */
export interface Api {
  readonly via: 'daemon' | 'local';
  call(method: string, path: string, body?: unknown): Promise<Record<string, unknown>>;
  stream(method: string, path: string, body: unknown, onLine: (value: unknown) => void): Promise<LineStream>;
  close(): Promise<void>;
}

export interface ApiOptions {
  /** What this command holds the data dir as when no daemon runs ('pair' keeps it for minutes). */
  kind?: Exclude<HolderKind, 'daemon'>;
  /** With no daemon: how long deleting waits for WhatsApp to log a device out. */
  logoutTimeoutMs?: number;
  logger?: Logger;
}

async function viaDaemon(dataDir: string): Promise<Api> {
  const socketPath = storePaths(dataDir).controlSocket;
  // A daemon that is starting holds the lock before its socket listens.
  const until = Date.now() + 5_000;
  for (;;) {
    try {
      await callSocket(socketPath, 'GET', '/control/info');
      break;
    } catch (err) {
      const errno = (err as { errno?: string }).errno;
      if (!(errno === 'ENOENT' || errno === 'ECONNREFUSED') || Date.now() > until) {
        const holder = dataDirHolder(dataDir);
        throw new GatewayError(
          'DAEMON_UNAVAILABLE',
          `the gateway daemon (pid ${holder?.pid ?? '?'}) holds ${dataDir} but its control socket ${socketPath} does not answer (${errno ?? (err as Error).message}); restart the daemon`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    via: 'daemon',
    call: async (method, path, body) => (await callSocket(socketPath, method, path, body)).body,
    stream: (method, path, body, onLine) => streamSocket(socketPath, method, path, body, onLine),
    close: async () => undefined,
  };
}

/** Opens the way to the gateway for one command; close() it when done. */
export async function openApi(dataDir: string, options: ApiOptions = {}): Promise<Api> {
  if (dataDirHolder(dataDir)?.kind === 'daemon') return viaDaemon(dataDir);
  const { openLocalDaemon } = await import('../daemon/boot.js');
  let local;
  try {
    local = await openLocalDaemon({
      dataDir,
      kind: options.kind ?? 'cli',
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.logoutTimeoutMs !== undefined ? { logoutTimeoutMs: options.logoutTimeoutMs } : {}),
      // Another command's hold is short; a `gateway pair` may pair for minutes: say so at once.
      lockWaitMs: dataDirHolder(dataDir)?.kind === 'pair' ? 0 : 30_000,
    });
  } catch (err) {
    // A daemon started while we waited for the lock.
    if (err instanceof GatewayError && err.code === 'STORE_LOCKED' && dataDirHolder(dataDir)?.kind === 'daemon') return viaDaemon(dataDir);
    throw err;
  }
  const socketPath = local.socketPath;
  return {
    via: 'local',
    call: async (method, path, body) => (await callSocket(socketPath, method, path, body)).body,
    stream: (method, path, body, onLine) => streamSocket(socketPath, method, path, body, onLine),
    close: () => local.close(),
  };
}

/** Runs `fn` with an Api and always closes it. */
export async function withApi<T>(dataDir: string, fn: (api: Api) => Promise<T>, options: ApiOptions = {}): Promise<T> {
  const api = await openApi(dataDir, options);
  try {
    return await fn(api);
  } finally {
    await api.close();
  }
}

/** An id for a path segment (ids never need escaping, but a typo must not change the route). */
export function seg(value: string): string {
  return encodeURIComponent(value);
}
