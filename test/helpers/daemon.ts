import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { loadConfig, saveConfig } from '../../src/config/load.js';
import type { GatewayConfig } from '../../src/config/schema.js';
import { startDaemon, type DaemonOptions, type RunningDaemon } from '../../src/daemon/boot.js';
import type { Core } from '../../src/daemon/core.js';
import type { FlowsFeature } from '../../src/flows/feature.js';
import type { WebhookDeliverer } from '../../src/webhooks/deliverer.js';
import { initialiseDataDir } from '../../src/config/init.js';
import type { Clock } from '../../src/domain/clock.js';
import type { Timers } from '../../src/domain/timers.js';
import { UNGUARDED } from '../../src/fs/write-guard.js';

/** Partial config, one level deep per section. */
export type ConfigPatch = { [K in keyof GatewayConfig]?: GatewayConfig[K] extends object ? Partial<GatewayConfig[K]> : GatewayConfig[K] };

export async function tempDir(prefix = 'gw-test-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** An initialised data dir with `patch` applied to its config; returns the server secret. */
export async function prepareDataDir(dataDir: string, patch: ConfigPatch = {}): Promise<string> {
  const { serverSecret } = await initialiseDataDir(dataDir, {}, false, UNGUARDED);
  const config = loadConfig(dataDir);
  const merged: Record<string, unknown> = { ...config };
  for (const [k, v] of Object.entries(patch)) {
    const base = (config as unknown as Record<string, unknown>)[k];
    merged[k] = typeof v === 'object' && v !== null && !Array.isArray(v) && typeof base === 'object' && base !== null ? { ...base, ...v } : v;
  }
  await saveConfig(dataDir, merged as unknown as GatewayConfig, UNGUARDED);
  return serverSecret;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- test convenience: bodies are asserted field by field
}

export interface RequestOptions {
  key?: string;
  secret?: string;
  json?: unknown;
  body?: BodyInit;
  headers?: Record<string, string>;
  /** Gives up after this long (default 60 s, far below fetch's own 300 s, so a hung request fails its test, not the run). */
  timeoutMs?: number;
}

export interface TestDaemon {
  url: string;
  dataDir: string;
  secret: string;
  daemon: RunningDaemon;
  core: Core;
  flows: FlowsFeature;
  webhooks: WebhookDeliverer;
  request(method: string, path: string, options?: RequestOptions): Promise<ApiResponse>;
  /** Creates an instance through the API; returns its id and key. */
  createInstance(body?: Record<string, unknown>): Promise<{ id: string; key: string; body: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any -- see ApiResponse
  /** A connected sandbox instance. */
  connectedSandbox(body?: Record<string, unknown>): Promise<{ id: string; key: string }>;
  close(): Promise<void>;
}

export interface TestDaemonOptions {
  config?: ConfigPatch;
  clock?: Clock;
  /** Timers on that clock (ManualTimers from ./manual-time.js). */
  timers?: Timers;
  /** Webhook delivery seams (timers, random, resolver, stopGraceMs). */
  webhooks?: DaemonOptions['webhooks'];
  /** Replaces Baileys for WhatsApp instances. */
  whatsapp?: DaemonOptions['whatsapp'];
  /** Modules each session thread imports first (with `baileys.sessionThreads` > 0). */
  sessionThreadPreloads?: DaemonOptions['sessionThreadPreloads'];
  defaultMetrics?: boolean;
  dataDir?: string;
  /** The daemon's logger (default: silent, or TEST_LOG_LEVEL). */
  logger?: Logger;
}

function isStaleSocket(err: unknown): boolean {
  const code = (err as { cause?: { code?: unknown } } | null)?.cause?.code;
  return err instanceof TypeError && (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET');
}

export async function request(base: string, method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers['x-api-key'] = options.key;
  if (options.secret !== undefined) headers['x-api-secret'] = options.secret;
  let body: BodyInit | undefined = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  }
  const signal = AbortSignal.timeout(options.timeoutMs ?? 60_000);
  const init = { method, headers, signal, ...(body !== undefined ? { body } : {}) };
  let res: Response;
  try {
    res = await fetch(base + path, init);
  } catch (err) {
    // A pooled keep-alive socket that the daemon closed as idle (5 s) while this process was too
    // busy to notice (a loaded machine; seen once in a whole Node 24 suite run) fails at once with
    // the socket closed. The daemon closes only idle sockets, so the request was not taken: it is
    // sent once more (a daemon that died mid-request fails the second try too).
    if (!isStaleSocket(err)) throw err;
    res = await fetch(base + path, init);
  }
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON; keep the text
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** A real daemon on an ephemeral port with its own data dir; always close() it. */
export async function startTestDaemon(options: TestDaemonOptions = {}): Promise<TestDaemon> {
  const dataDir = options.dataDir ?? (await tempDir());
  // In-process daemons keep their sessions on their own thread unless a test asks for session
  // threads: a thread started from source transpiles the sources again under tsx (seconds of CPU a
  // daemon on a loaded CI machine). The built daemon of the e2e tests runs the default (threads).
  const secret = options.dataDir
    ? ''
    : await prepareDataDir(dataDir, { webhooks: { allowPrivateTargets: true }, ...options.config, baileys: { sessionThreads: 0, ...options.config?.baileys } });
  const daemon = await startDaemon({
    dataDir,
    port: 0,
    logger: options.logger ?? pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    defaultMetrics: options.defaultMetrics ?? false,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.timers ? { timers: options.timers } : {}),
    ...(options.webhooks ? { webhooks: options.webhooks } : {}),
    ...(options.whatsapp ? { whatsapp: options.whatsapp } : {}),
    ...(options.sessionThreadPreloads ? { sessionThreadPreloads: options.sessionThreadPreloads } : {}),
  });
  const url = `http://127.0.0.1:${daemon.port}`;
  const req = (method: string, path: string, o?: RequestOptions) => request(url, method, path, o);
  const createInstance = async (body: Record<string, unknown> = { sandbox: true }) => {
    const res = await req('POST', '/api/instances/create', { secret, json: body });
    if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
    return { id: res.body.instanceId as string, key: res.body.apiKey as string, body: res.body };
  };
  return {
    url,
    dataDir,
    secret,
    daemon,
    core: daemon.daemon.core,
    flows: daemon.daemon.flows,
    webhooks: daemon.daemon.webhooks,
    request: req,
    createInstance,
    connectedSandbox: async (body = {}) => {
      // A sandbox never takes the owner's trial (contract part 3): one to send with is premium
      // unless the test gives it credits or days of its own.
      const plan = 'credits' in body || 'premiumDays' in body ? {} : { premiumDays: 30 };
      const inst = await createInstance({ sandbox: true, ...plan, ...body });
      const scan = await req('POST', `/api/${inst.id}/sandbox/scan`, { key: inst.key });
      if (scan.status !== 200) throw new Error(`scan failed: ${scan.status}`);
      return { id: inst.id, key: inst.key };
    },
    close: async () => {
      await daemon.close();
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Polls `check` until it returns a truthy value or `ms` pass. */
export async function waitFor<T>(check: () => T | Promise<T>, ms = 3000, label = 'condition'): Promise<NonNullable<T>> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > until) throw new Error(`timed out waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A pino logger at `level` that keeps every line it writes, parsed (for tests that read the log). */
export function capturingLogger(level = 'info'): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { logger, lines };
}
