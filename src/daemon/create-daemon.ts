import type Koa from 'koa';
import type { Logger } from 'pino';
import { accountFeature } from '../account/feature.js';
import { adminFeature } from '../admin/routes.js';
import type { GatewayConfig } from '../config/schema.js';
import { configServerSecret } from '../config/server-secret.js';
import type { BaileysOptions } from '../connection/baileys/options.js';
import { ConnectionManager } from '../connection/manager.js';
import { SandboxConnection } from '../connection/sandbox.js';
import type { ConnectionFactory, ConnectionHooks } from '../connection/types.js';
import { systemClock, type Clock } from '../domain/clock.js';
import { noMetrics } from '../domain/metrics-sink.js';
import { systemTimers, type Timers } from '../domain/timers.js';
import { EventBus } from '../events/bus.js';
import { liveEventsFeature } from '../live-events/feature.js';
import type { DaemonMode, Feature } from '../features/feature.js';
import { flowsFeature, type FlowsFeature } from '../flows/feature.js';
import { groupsFeature } from '../groups/feature.js';
import { callsFeature } from '../calls/feature.js';
import { presenceFeature } from '../presence/feature.js';
import { settingsFeature, settingsOf, withSettings } from '../settings/feature.js';
import { createApp } from '../http/app.js';
import { AuthFailureLimiter } from '../http/auth-limiter.js';
import type { ControlRequests } from '../http/control-requests.js';
import type { SessionResolver } from '../http/auth.js';
import type { RouteDef } from '../http/route.js';
import { InstanceLifecycle } from '../instances/lifecycle.js';
import { instancesFeature } from '../instances/routes.js';
import { mcpFeature } from '../mcp/feature.js';
import { messagesFeature } from '../messages/feature.js';
import { MessageHub } from '../messages/hub.js';
import { createGatewayMetrics } from '../metrics/prometheus.js';
import { metricsFeature } from '../metrics/routes.js';
import { operationsFeature } from '../openapi/routes.js';
import { pairingFeature } from '../pairing/routes.js';
import { panelFeature } from '../panel/feature.js';
import { sandboxFeature } from '../sandbox/routes.js';
import { sendingFeature } from '../sending/feature.js';
import { SendService } from '../sending/send-service.js';
import { StatusReporter } from '../status/status-reporter.js';
import { openStorage } from '../storage/open.js';
import { isPostgres } from '../storage/postgres/is-postgres.js';
import { pgServerSecret } from '../cluster/pg-server-secret.js';
import { clusterFeature } from '../cluster/feature.js';
import type { InstanceRecord } from '../schemas/instance.js';
import type { ConnectionStatus } from '../domain/types.js';
import { storePaths } from '../storage/files/paths.js';
import type { Storage } from '../storage/storage.js';
import type { WriteGuard } from '../fs/write-guard.js';
import type { WebhookDeliverer } from '../webhooks/deliverer.js';
import { webhooksFeature, type WebhookSeams } from '../webhooks/feature.js';
import { connectionHooks } from './connection-hooks.js';
import { auditPart } from '../audit/audit-part.js';
import { auditFeature } from '../audit/feature.js';
import { operatorsFeature } from '../operators/feature.js';
import { usageFeature } from '../usage/feature.js';
import type { Core } from './core.js';
import { stampedAuth } from '../connection/lease-epoch.js';
import type { SessionThreadStats } from '../connection/types.js';

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
  /** Modules each session thread imports before Baileys (`baileys.sessionThreads` > 0; tests: the protocol double's certificate). */
  sessionThreadPreloads?: readonly string[];
  webhooks?: WebhookSeams;
  /** prom-client's process metrics (off in tests that count series). */
  defaultMetrics?: boolean;
  /** How long deleting an instance waits to log its device out when its connection is not live. */
  logoutTimeoutMs?: number;
  /** The storage engine, already open (default: the files engine in `dataDir`). */
  storage?: Storage;
  /** The data dir lock this process holds: every write of the files in `dataDir` checks it. */
  guard: WriteGuard;
  /** Panel sessions, when the panel is on (default the panel's own). */
  sessions?: SessionResolver;
}

/** The daemon, built and not yet running: `start()` opens connections, `stop()` closes everything. */
export interface Daemon {
  /** The parts it was built from (for the boot module and tests; features get only their own). */
  readonly core: Core;
  readonly app: Koa;
  /** Requests of the control socket go in here (trusted like the server secret). */
  readonly control: ControlRequests;
  readonly routes: readonly RouteDef[];
  readonly lifecycle: InstanceLifecycle;
  readonly flows: FlowsFeature;
  readonly webhooks: WebhookDeliverer;
  start(): Promise<void>;
  /** The daemon listens now: what needs its real address (a node's leases) starts. */
  listening(address: { host: string; port: number }): Promise<void>;
  /** Ends the long-lived answers (live events) so HTTP can drain. */
  closeStreams(): void;
  stop(): Promise<void>;
}

/**
 * The composition root: the whole daemon in one place. The shared parts first (storage, the event
 * bus, connections, sending, status), then the features, each built from only the parts it names
 * and returning what it adds (routes, middleware, event consumers, gauges); then the HTTP app.
 */
export async function createDaemon(parts: DaemonParts): Promise<Daemon> {
  const { dataDir, mode, logger } = parts;
  const clock = parts.clock ?? systemClock;
  const timers = parts.timers ?? systemTimers;

  // ---- shared parts -------------------------------------------------------------------------
  // On PostgreSQL the plans and the webhook policy are the gateway's (every node the same).
  const opened = parts.storage ? { storage: parts.storage, config: parts.config } : await openStorage({ dataDir, config: parts.config, clock, timers, logger, guard: parts.guard });
  const { storage, config } = opened;
  const { instances, credits, messages, media } = storage;
  // On PostgreSQL every node shares one server secret (the gateway record); else config.json holds it.
  const pg = isPostgres(storage) ? storage : null;
  const serverSecret = pg
    ? await pgServerSecret(pg, logger)
    : configServerSecret(dataDir, { hash: config.serverSecretHash, retiring: config.retiringServerSecretHash ?? null }, parts.guard);
  const bus = new EventBus(logger);
  // Who did what (sign-ins, rotations, plan, webhook and flow changes, replies): given to the features that act.
  const audit = auditPart(storage.audit, clock, logger);
  const hub = new MessageHub({ store: messages, media, bus, clock, logger, maxMediaBytes: config.media.maxBytes });
  const prometheus =
    config.metrics.mode === 'off' ? null : createGatewayMetrics({ connectionStatuses: () => [...manager.all()].map((e) => e.connection.status) }, { defaultMetrics: parts.defaultMetrics ?? true });
  const metrics = prometheus?.sink ?? noMetrics;
  // The session threads (baileys.sessionThreads), once the WhatsApp factory is loaded: how many run, how many replaced one that stopped.
  let sessionThreads: (() => SessionThreadStats) | null = null;
  prometheus?.addGauge('gateway_session_threads', 'Threads the WhatsApp sessions run on (baileys.sessionThreads; 0: the daemon thread).', () => sessionThreads?.().running ?? 0);
  prometheus?.addGauge('gateway_session_threads_replaced', 'Session threads that stopped unexpectedly and were replaced since the daemon started.', () => sessionThreads?.().replaced ?? 0);
  // The lease epoch a connection's auth writes carry (cluster mode; bound once the leases exist).
  let leaseEpoch: (id: string) => number | null = () => null;
  // Connections report to the status reporter, which reads the manager: tied through this late binding.
  let hooksFor: (id: string) => ConnectionHooks = () => {
    throw new Error('connection hooks used before the daemon was built');
  };
  const manager = new ConnectionManager({
    sandboxFactory: (record, hooks) => new SandboxConnection(record.id, hooks, { auth: stampedAuth(storage.auth, leaseEpoch(record.id)), now: () => clock.now(), alwaysOnline: () => settingsOf(instances.get(record.id)).alwaysOnline }),
    whatsappFactory: async () => {
      const options: BaileysOptions = {
        auth: storage.auth,
        leaseEpoch: (id) => leaseEpoch(id),
        logger,
        settings: config.baileys,
        clock,
        // Read at every connect: a changed proxy, syncFullHistory or alwaysOnline applies from the next one.
        connectSettings: (id) => {
          const s = settingsOf(instances.get(id));
          return { proxy: s.proxy, syncFullHistory: s.syncFullHistory, alwaysOnline: s.alwaysOnline };
        },
      };
      if (parts.whatsapp) return parts.whatsapp(options);
      // The daemon's sessions on threads of their own (connection/threads/); the CLI's one-off pairing stays on its own thread.
      const threads = mode === 'daemon' ? config.baileys.sessionThreads : 0;
      if (threads > 0) {
        const { createThreadedConnectionFactory, SESSION_THREAD_NICE } = await import('../connection/threads/session-threads.js');
        const factory = createThreadedConnectionFactory(options, { threads, ...(parts.sessionThreadPreloads ? { preloads: parts.sessionThreadPreloads } : {}) });
        sessionThreads = factory.threads ?? null;
        // V8's helper threads now work mostly for the session threads' heaps: at their priority too.
        const { lowerNodeHelperThreads } = await import('../connection/threads/helper-threads.js');
        logger.debug({ threads: lowerNodeHelperThreads(SESSION_THREAD_NICE), nice: SESSION_THREAD_NICE }, "Node's helper threads set below the daemon's priority");
        return factory;
      }
      const { createBaileysConnectionFactory } = await import('../connection/baileys/connection.js');
      return createBaileysConnectionFactory(options);
    },
    hooksFor: (id) => hooksFor(id),
    logger,
    pacing: config.sending,
    sendsPerMinute: config.rateLimit.sendsPerMinute,
    now: () => clock.now(),
    maxConcurrentConnects: config.baileys.maxConcurrentConnects,
  });
  let appControl: ControlRequests | null = null;
  // Several hosts: the leases say which instances run here; requests about the others go to their owner.
  const cluster =
    pg && mode === 'daemon'
      ? await clusterFeature({
          config,
          storage: pg,
          instances,
          control: () => appControl!,
          logger,
          adopt: (id) => {
            const record = instances.get(id);
            if (!record) return;
            // What the previous owner spent and stored is read again before anything runs here.
            storage.messages.adopted?.(id);
            void (async () => {
              await credits.refresh?.(id);
              await manager.start(record);
            })().catch((err: unknown) => logger.error({ err, instanceId: id }, 'could not start a connection taken over'));
            void webhooks.deliverer.outbox.loadInstance(id).catch((err: unknown) => logger.error({ err, instanceId: id }, 'could not load the webhooks of an instance taken over'));
          },
          release: async (id) => {
            webhooks.deliverer.outbox.forget(id);
            await manager.release(id);
            // While the lease is still ours: what the store kept back for the instance is written.
            await storage.messages.flush(id).catch((err: unknown) => logger.error({ err, instanceId: id }, 'could not store the last messages of an instance handed over'));
          },
        })
      : null;
  if (cluster && pg) {
    leaseEpoch = (id) => cluster.leases.owned.get(id) ?? null;
    // Every other write of an owned instance carries its epoch too (messages, media, holds, flows).
    pg.epochs.bind(leaseEpoch);
  }
  const status = new StatusReporter({
    instances,
    credits,
    manager,
    bus,
    clock,
    timers,
    logger,
    offline: mode === 'offline',
    ...(cluster ? { elsewhere: (id: string) => (cluster.owns(id) ? null : cluster.leases.lease(id)) } : {}),
  });
  const plainHooks = connectionHooks({ status, manager, bus, hub, clock, logger, ...(cluster ? { reportStatus: (id: string, s: ConnectionStatus, r: string | null) => cluster.leases.reportStatus(id, s, r) } : {}) });
  const sender = new SendService({ instances, credits, manager, clock, logger, metrics, typing: config.sending.typing, planChanged: (id) => status.planChanged(id), hub, usage: storage.usage });
  // The instance settings act where connections report, before anything is stored or published.
  hooksFor = withSettings(plainHooks, { settings: (id) => settingsOf(instances.get(id)), actions: sender, logger });
  const core: Core = { mode, dataDir, guard: parts.guard, paths: storePaths(dataDir), config, serverSecret, clock, timers, logger, storage, instances, credits, bus, manager, status, sender, metrics, messages, media, hub };

  // ---- features -----------------------------------------------------------------------------
  const webhooks = await webhooksFeature(
    { mode, config, clock, timers, logger, metrics, instances, outbox: storage.outbox, audit, ...(cluster ? { serves: (id: string) => cluster.owns(id) } : {}) },
    parts.webhooks,
  );
  const flows = flowsFeature({ mode, config, clock, timers, logger, bus, sender, instances, store: storage.flows, audit });
  const liveEvents = liveEventsFeature({ maxClientsPerInstance: config.events.maxClientsPerInstance });
  const lifecycleRemovers: Array<(id: string) => Promise<void>> = [];
  // A new instance runs where it was created; on several hosts this node takes its lease first.
  const startConnection = async (record: InstanceRecord): Promise<void> => {
    if (cluster && !(await cluster.claim(record.id))) return;
    await manager.start(record);
    if (cluster) await webhooks.deliverer.outbox.loadInstance(record.id);
  };
  const lifecycle = new InstanceLifecycle({ mode, config, clock, logger, instances, credits, storage, manager, status, startConnection }, lifecycleRemovers, parts.logoutTimeoutMs ?? 10_000);
  const limiter = new AuthFailureLimiter(config.rateLimit.authFailures, config.rateLimit.authWindowMs, () => clock.now());
  // The panel: its sessions authenticate the ordinary routes; off, /panel answers 404.
  const panel = config.panel.enabled
    ? panelFeature({ sessionIdleMinutes: config.panel.sessionIdleMinutes, instances, serverSecretHash: () => serverSecret.hash(), clock, limiter, store: storage.sessions, operators: storage.operators, audit })
    : null;
  const features: Feature[] = [
    instancesFeature({ mode, config, instances, status, manager, lifecycle, logger, ownerOf: (id) => cluster?.ownerOf(id) ?? null, audit }),
    operatorsFeature({ operators: storage.operators, instances, clock, audit, changed: (name, hash) => panel?.panelSessions.operatorChanged(name, hash) }),
    auditFeature({ mode, log: storage.audit, keepDays: config.audit.keepDays, clock, timers, logger }),
    usageFeature({ mode, usage: storage.usage, instances, keepDays: config.history.days, clock, timers, logger }),
    sendingFeature({ config, sender, audit, handedOver: async (id, chatId) => (await flows.handovers.openFor(id, chatId)) !== undefined }),
    accountFeature({ config, sender, messages }),
    messagesFeature({ mode, clock, messages, media, sender, openHandovers: (id) => flows.openHandovers(id) }),
    sandboxFeature({ config, manager, status }),
    groupsFeature({ sender, maxPictureBytes: config.media.maxBytes }),
    callsFeature({ sender, logger, autoReject: (id) => settingsOf(instances.get(id)).calls }),
    presenceFeature({ sender }),
    mcpFeature({ config, sender, clock, messages, media, openHandovers: (id) => flows.openHandovers(id), logger }),
    settingsFeature({ instances, tenantsMayProxy: config.instances.tenantsMayProxy, sender, logger }),
    webhooks,
    flows,
    liveEvents,
    pairingFeature({ instances, manager }),
    adminFeature({ mode, dataDir, serverSecret, audit }),
    metricsFeature({ mode: config.metrics.mode, registry: prometheus?.registry ?? null }),
    operationsFeature({ allRoutes: () => routes, health: () => ({ node: cluster?.nodeId ?? null, storage: storage.engine }) }),
    ...(cluster ? [cluster] : []),
    ...(panel ? [panel] : []),
  ];
  for (const f of features) {
    for (const c of f.consumers ?? []) bus.register(c.consumer, { critical: c.critical ?? false });
    for (const [name, g] of Object.entries(f.gauges ?? {})) prometheus?.addGauge(name, g.help, g.read);
    if (f.removeInstance) lifecycleRemovers.push(f.removeInstance.bind(f));
  }
  const routes: RouteDef[] = features.flatMap((f) => f.routes ?? []);
  const sessions = parts.sessions ?? features.find((f) => f.sessions)?.sessions;
  const { app, control } = createApp({
    routes,
    auth: {
      instances,
      serverSecretHash: () => serverSecret.hash(),
      retiringSecretHash: () => serverSecret.retiringHash(),
      keyRetired: (id, hash) => lifecycle.isRetired(id, hash),
      // A retirement that cannot be stored now (a full disk) does not fail the request: the old
      // credential then works a while longer, and the next use tries again.
      credentialUsed: (who) =>
        (who.kind === 'server-secret' ? serverSecret.shown() : lifecycle.keyShown(who.instanceId, who.keyHash)).catch((err: unknown) =>
          logger.error({ err }, 'could not retire a rotated credential'),
        ),
      limiter,
      ...(sessions ? { sessions } : {}),
    },
    logger,
    metrics,
    before: features.flatMap((f) => f.before ?? []),
  });
  appControl = control;

  let stopping: Promise<void> | null = null;
  return {
    core,
    app,
    control,
    routes,
    lifecycle,
    flows,
    webhooks: webhooks.deliverer,
    async start() {
      for (const f of features) await f.start?.();
      if (mode !== 'daemon') return;
      status.start();
      await lifecycle.resumeDeletes();
      // On several hosts the leases start what runs here, once the node listens (`listening`).
      if (cluster) return;
      // Not awaited: connections open in the background, a few at a time.
      void manager.startAll(instances.list()).catch((err: unknown) => logger.error({ err }, 'starting connections failed'));
    },
    async listening(address) {
      for (const f of features) await f.listening?.(address);
    },
    closeStreams() {
      for (const f of features) f.closeStreams?.();
    },
    stop() {
      stopping ??= (async () => {
        status.stop();
        await manager.stopAll();
        // Before the features stop (the cluster frees its leases then): writes kept back go now.
        await storage.messages.flush().catch((err: unknown) => logger.error({ err }, 'could not store the last messages at stop'));
        for (const f of [...features].reverse()) await f.stop?.().catch((err: unknown) => logger.error({ err, feature: f.name }, 'feature stop failed'));
        await storage.close();
        prometheus?.registry.clear();
      })();
      return stopping;
    },
  };
}
