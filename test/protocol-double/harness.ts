import './preload.js';
import { rm } from 'node:fs/promises';
import { pino } from 'pino';
import type { ConnectionObservation } from '../../src/connection/manager.js';
import { createBaileysConnectionFactory } from '../../src/connection/baileys/connection.js';
import { createThreadedConnectionFactory } from '../../src/connection/threads/session-threads.js';

type ThreadedFactory = ReturnType<typeof createThreadedConnectionFactory>;
import type { DaemonOptions } from '../../src/daemon/boot.js';
import { prepareDataDir, startTestDaemon, tempDir, waitFor, type ApiResponse, type ConfigPatch, type TestDaemon } from '../helpers/daemon.js';
import { ProtocolDouble, type ProtocolDoubleOptions } from './server.js';

/**
 * What a session thread imports first (it has its own Baileys and fetch to patch): the double's
 * certificate, and its media host as WhatsApp's CDN (preload-child.mjs).
 */
function threadPreload(double: ProtocolDouble): string {
  return `${new URL('./preload-child.mjs', import.meta.url).href}?media=${encodeURIComponent(double.media.hostname)}`;
}

/**
 * A real in-process daemon whose non-sandbox instances use real Baileys sockets pointed at a
 * protocol double; restartable on the same data dir.
 */
export interface DoubleDaemon {
  double: ProtocolDouble;
  dataDir: string;
  secret: string;
  /** The running daemon (replaced by restart()). */
  d: TestDaemon;
  /** With `threads`: the running daemon's session threads (replaced by restart()). */
  sessionThreads: ThreadedFactory | null;
  /** Status changes per instance, as the daemon's connection manager reported them. */
  observed: Map<string, ConnectionObservation[]>;
  createInstance(): Promise<{ id: string; key: string }>;
  status(id: string, key: string): Promise<{ status: string; reason: string | null }>;
  /** Polls GET /status until it is `status` (and the reason matches, if given). */
  waitStatus(id: string, key: string, status: string, options?: { ms?: number; reason?: RegExp }): Promise<{ status: string; reason: string | null }>;
  qrCode(id: string, key: string): Promise<ApiResponse>;
  /** New instance, its QR scanned by the double, connected. */
  pairedInstance(): Promise<{ id: string; key: string; qr: string }>;
  restart(): Promise<TestDaemon>;
  close(): Promise<void>;
}

/** Config that makes reconnect backoff short enough for tests (it never goes below half a step). */
export const FAST_BAILEYS: NonNullable<ConfigPatch['baileys']> = { reconnectBaseMs: 50, reconnectMaxMs: 200, maxReconnectAttempts: 10 };

/**
 * `threads`: the daemon runs its sessions on that many session threads (`baileys.sessionThreads`),
 * each importing preload.ts first; absent, on the daemon's own thread as before.
 */
export async function startDoubleDaemon(given: { double?: ProtocolDoubleOptions; config?: ConfigPatch; threads?: number } = {}): Promise<DoubleDaemon> {
  // DOUBLE_SESSION_THREADS=N runs every double daemon's sessions on N threads (to try a suite that way).
  const fromEnv = Number(process.env.DOUBLE_SESSION_THREADS ?? 0);
  const options = { ...given, ...(given.threads === undefined && fromEnv > 0 ? { threads: fromEnv } : {}) };
  const double = await ProtocolDouble.start(options.double);
  const dataDir = await tempDir('gw-double-');
  const secret = await prepareDataDir(dataDir, {
    webhooks: { allowPrivateTargets: true },
    ...options.config,
    baileys: { ...FAST_BAILEYS, logLevel: 'silent', ...options.config?.baileys, webSocketUrl: double.url },
  });
  const observed = new Map<string, ConnectionObservation[]>();
  // The daemon's own logger is silent in tests; PROTOCOL_DOUBLE_DEBUG=1 shows Baileys' too.
  const debug = process.env.PROTOCOL_DOUBLE_DEBUG === '1';
  const factory: DaemonOptions['whatsapp'] = (options) =>
    createBaileysConnectionFactory(debug ? { ...options, logger: pino({ level: 'debug' }), settings: { ...options.settings, logLevel: 'debug' } } : options);
  // Sessions on threads: the daemon's own factory for them, kept so a test can stop a thread.
  const threaded =
    (threads: number): NonNullable<DaemonOptions['whatsapp']> =>
    (o) => {
      const made = createThreadedConnectionFactory(o, { threads, preloads: [threadPreload(double)] });
      self.sessionThreads = made;
      return made;
    };
  const start = async (): Promise<TestDaemon> => {
    const d = await startTestDaemon({ dataDir, whatsapp: options.threads ? threaded(options.threads) : factory });
    for (const id of observed.keys()) follow(d, id);
    return d;
  };
  const follow = (d: TestDaemon, id: string): void => {
    let list = observed.get(id);
    if (!list) observed.set(id, (list = []));
    const events = list;
    d.core.manager.observe(id, (e) => events.push(e));
  };
  const self: DoubleDaemon = {
    double,
    dataDir,
    secret,
    d: null as unknown as TestDaemon,
    sessionThreads: null,
    observed,
    async createInstance() {
      const res = await self.d.request('POST', '/api/instances/create', { secret, json: { sandbox: false } });
      if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
      const id = res.body.instanceId as string;
      follow(self.d, id);
      return { id, key: res.body.apiKey as string };
    },
    async status(id, key) {
      const res = await self.d.request('GET', `/api/${id}/status`, { key });
      if (res.status !== 200) throw new Error(`status failed: ${res.status} ${JSON.stringify(res.body)}`);
      return { status: res.body.status as string, reason: (res.body.reason as string | null) ?? null };
    },
    async waitStatus(id, key, status, { ms = 15_000, reason } = {}) {
      let last: { status: string; reason: string | null } | undefined;
      try {
        return await waitFor(
          async () => {
            last = await self.status(id, key);
            return last.status === status && (!reason || reason.test(last.reason ?? '')) ? last : null;
          },
          ms,
          `status ${status}${reason ? ` ${String(reason)}` : ''}`,
        );
      } catch (err) {
        throw new Error(`${(err as Error).message}; last: ${JSON.stringify(last)}`);
      }
    },
    qrCode(id, key) {
      return self.d.request('GET', `/api/${id}/qr-code`, { key });
    },
    async pairedInstance() {
      const { id, key } = await self.createInstance();
      await self.waitStatus(id, key, 'qr_code_generated');
      const res = await self.qrCode(id, key);
      if (res.status !== 200) throw new Error(`qr-code failed: ${res.status} ${JSON.stringify(res.body)}`);
      const qr = res.body.qr as string;
      await double.scan(qr);
      await self.waitStatus(id, key, 'connected');
      // The phone's initial history sync acknowledged: Baileys is online, nothing left in flight.
      await double.synced();
      return { id, key, qr };
    },
    async restart() {
      await self.d.close();
      self.d = await start();
      return self.d;
    },
    async close() {
      try {
        await self.d.close();
      } finally {
        await double.close();
        await rm(dataDir, { recursive: true, force: true });
      }
    },
  };
  self.d = await start();
  return self;
}
