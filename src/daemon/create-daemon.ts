import type Koa from 'koa';
import type { Logger } from 'pino';
import { loadConfig, saveConfig } from '../config/load.js';
import type { GatewayConfig } from '../config/schema.js';
import type { BaileysOptions } from '../connection/baileys/options.js';
import { ConnectionManager } from '../connection/manager.js';
import { SandboxConnection } from '../connection/sandbox.js';
import { sandboxRoutes } from '../connection/sandbox-routes.js';
import type { ConnectionFactory, ConnectionHooks } from '../connection/types.js';
import { controlRoutes } from '../control/routes.js';
import type { Core, DaemonMode, ServerSecret } from '../core/core.js';
import type { Feature } from '../core/feature.js';
import { systemClock, type Clock } from '../domain/clock.js';
import { MessageHub } from '../messages/hub.js';
import { messagesFeature } from '../messages/feature.js';
import { systemTimers, type Timers } from '../domain/timers.js';
import { EventBus } from '../events/bus.js';
import { liveEventsFeature } from '../events/live.js';
import { flowsFeature, type FlowsFeature } from '../flows/feature.js';
import { createApp } from '../http/app.js';
import { AuthFailureLimiter } from '../http/auth-limiter.js';
import type { SessionResolver } from '../http/auth.js';
import type { RouteDef } from '../http/route.js';
import { InstanceLifecycle } from '../instances/lifecycle.js';
import { instanceRoutes } from '../instances/routes.js';
import { createGatewayMetrics } from '../metrics/prometheus.js';
import { metricsRoutes } from '../metrics/routes.js';
import { noMetrics } from '../metrics/sink.js';
import { operationsRoutes } from '../openapi/routes.js';
import { createPanel } from '../panel/feature.js';
import { StatusReporter } from '../plans/status-reporter.js';
import { actionRoutes } from '../sending/action-routes.js';
import { directoryRoutes } from '../sending/directory-routes.js';
import { sendingRoutes } from '../sending/routes.js';
import { SendService } from '../sending/send-service.js';
import { storePaths } from '../storage/files/paths.js';
import { openFileStorage } from '../storage/files/index.js';
import type { Storage } from '../storage/storage.js';
import { generateServerSecret, hashSecret } from '../domain/secrets.js';
import { webhooksFeature, type WebhookSeams } from '../webhooks/feature.js';
import type { WebhookDeliverer } from '../webhooks/deliverer.js';

/** What the daemon is built from; tests swap the seams. */
export interface DaemonParts {
  dataDir: string;
  config: GatewayConfig;
  mode: DaemonMode;
  logger: Logger;
  clock?: Clock;
  /** Waits on the clock (default real timers). */
  timers?: Timers;
  /** Real WhatsApp connections; default Baileys, loaded on first use. */
  whatsapp?: (options: BaileysOptions) => ConnectionFactory;
  webhooks?: WebhookSeams;
  /** prom-client's process metrics (off in tests that count series). */
  defaultMetrics?: boolean;
  /** How long deleting an instance waits to log its device out when its connection is not live. */
  logoutTimeoutMs?: number;
  /** The storage engine, already open (default: the files engine in `dataDir`). */
  storage?: Storage;
  /** Panel sessions, when the panel is on. */
  sessions?: SessionResolver;
}

/** The daemon, built and not yet running: `start()` opens connections, `stop()` closes everything. */
export interface Daemon {
  readonly core: Core;
  readonly app: Koa;
  readonly routes: readonly RouteDef[];
  readonly lifecycle: InstanceLifecycle;
  readonly flows: FlowsFeature;
  readonly webhooks: WebhookDeliverer;
  start(): Promise<void>;
  /** Ends the long-lived answers (live events) so HTTP can drain. */
  closeStreams(): void;
  stop(): Promise<void>;
}

function serverSecret(dataDir: string, initial: string | null): ServerSecret {
  let hash = initial;
  return {
    hash: () => hash,
    async rotate() {
      const secret = generateServerSecret();
      // Re-read the file: every other setting stays as the operator left it.
      const config = loadConfig(dataDir);
      await saveConfig(dataDir, { ...config, serverSecretHash: hashSecret(secret) });
      hash = hashSecret(secret);
      return secret;
    },
  };
}

/**
 * The composition root: the whole daemon in one place. Core parts first (stores, credits, event
 * bus, connections, sending), then the features, each given the core and returning what it adds
 * (routes, event consumers, gauges); then the HTTP app from every route.
 */
export async function createDaemon(parts: DaemonParts): Promise<Daemon> {
  const { dataDir, config, mode, logger } = parts;
  const clock = parts.clock ?? systemClock;
  const timers = parts.timers ?? systemTimers;
  const paths = storePaths(dataDir);

  // ---- core ---------------------------------------------------------------------------------
  const storage = parts.storage ?? (await openFileStorage({ dataDir, config, clock, timers, logger }));
  const { instances, credits, messages, media } = storage;
  const bus = new EventBus(logger);
  const hub = new MessageHub({ store: messages, media, bus, clock, logger, maxMediaBytes: config.media.maxBytes });
  const prometheus = config.metrics.mode === 'off' ? null : createGatewayMetrics({ connectionStatuses: () => [...manager.all()].map((e) => e.connection.status) }, { defaultMetrics: parts.defaultMetrics ?? true });
  const metrics = prometheus?.sink ?? noMetrics;
  const now = (): string => new Date(clock.now()).toISOString();

  // What connections report becomes events; observers (`gateway pair`) hear status and QR too.
  const hooksFor = (id: string): ConnectionHooks => ({
    onStatus: (change) => {
      status.connectionChanged(id, change);
      manager.notify(id, { type: 'status', change });
    },
    onQr: (qr) => {
      bus.publish({ type: 'qr.updated', instanceId: id, timestamp: now(), data: { qr } }).catch((err: unknown) => logger.error({ err, instanceId: id }, 'could not store qr.updated'));
      manager.notify(id, { type: 'qr', qr });
    },
    onMessage: (message, media) => hub.received(id, message, media),
    onUpdate: (update) => hub.update(id, update),
  });
  const manager = new ConnectionManager({
    sandboxFactory: (record, hooks) => new SandboxConnection(record.id, hooks, { authDir: paths.authDir, now: () => clock.now() }),
    whatsappFactory: async () => {
      const options: BaileysOptions = { dataDir, logger, settings: config.baileys, clock };
      if (parts.whatsapp) return parts.whatsapp(options);
      const { createBaileysConnectionFactory } = await import('../connection/baileys/connection.js');
      return createBaileysConnectionFactory(options);
    },
    hooksFor,
    logger,
    pacing: config.sending,
    sendsPerMinute: config.rateLimit.sendsPerMinute,
    now: () => clock.now(),
    maxConcurrentConnects: config.baileys.maxConcurrentConnects,
  });
  const status = new StatusReporter({ instances, credits, manager, bus, clock, timers, logger, offline: mode === 'offline' });
  const sender = new SendService({ instances, credits, manager, clock, logger, metrics, typing: config.sending.typing, planChanged: (id) => status.planChanged(id), hub });
  const core: Core = {
    mode,
    dataDir,
    paths,
    config,
    serverSecret: serverSecret(dataDir, config.serverSecretHash),
    clock,
    timers,
    logger,
    instances,
    credits,
    bus,
    manager,
    status,
    sender,
    metrics,
    messages,
    media,
    hub,
    storage,
  };

  // ---- features -----------------------------------------------------------------------------
  const webhooks = await webhooksFeature(core, parts.webhooks);
  const flows = flowsFeature(core);
  // The chats list shows which chats a person took over: the flows feature knows.
  const openHandovers = async (id: string): Promise<ReadonlySet<string>> => new Set((await flows.handovers.list(id)).map((h) => h.chatId));
  const liveEvents = liveEventsFeature(core);
  const features: Feature[] = [messagesFeature(core, openHandovers), webhooks, flows, liveEvents];
  for (const f of features) for (const c of f.consumers ?? []) bus.register(c.consumer, { critical: c.critical ?? false });
  for (const f of features) for (const [name, g] of Object.entries(f.gauges ?? {})) prometheus?.addGauge(name, g.help, g.read);

  const lifecycle = new InstanceLifecycle(
    core,
    features.flatMap((f) => (f.removeInstance ? [f.removeInstance.bind(f)] : [])),
    parts.logoutTimeoutMs ?? 10_000,
  );
  const routes: RouteDef[] = [
    ...instanceRoutes(core, lifecycle),
    ...sendingRoutes(core),
    ...actionRoutes(core),
    ...directoryRoutes(core),
    ...sandboxRoutes(core),
    ...features.flatMap((f) => f.routes ?? []),
    ...metricsRoutes(config.metrics.mode, prometheus?.registry ?? null),
    ...controlRoutes(core),
    ...operationsRoutes(() => routes),
  ];
  const limiter = new AuthFailureLimiter(config.rateLimit.authFailures, config.rateLimit.authWindowMs, () => clock.now());
  // The panel: its sessions authenticate the ordinary routes; off, /panel answers 404.
  const panel = config.panel.enabled ? createPanel(core, limiter) : null;
  const sessions = parts.sessions ?? panel?.sessions;
  const app = createApp({
    routes,
    auth: { instances, serverSecretHash: () => core.serverSecret.hash(), limiter, ...(sessions ? { sessions } : {}) },
    logger,
    metrics,
    ...(panel ? { before: [panel.middleware] } : {}),
  });

  let stopping: Promise<void> | null = null;
  return {
    core,
    app,
    routes,
    lifecycle,
    flows,
    webhooks: webhooks.deliverer,
    async start() {
      for (const f of features) await f.start?.();
      if (mode !== 'daemon') return;
      status.start();
      await lifecycle.resumeDeletes();
      // Not awaited: connections open in the background, a few at a time.
      void manager.startAll(instances.list()).catch((err: unknown) => logger.error({ err }, 'starting connections failed'));
    },
    closeStreams() {
      liveEvents.live.close();
    },
    stop() {
      stopping ??= (async () => {
        status.stop();
        await manager.stopAll();
        for (const f of [...features].reverse()) await f.stop?.().catch((err: unknown) => logger.error({ err, feature: f.name }, 'feature stop failed'));
        await storage.close();
        prometheus?.registry.clear();
      })();
      return stopping;
    },
  };
}
