import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { loadConfig, isInitialised } from '../config/load.js';
import type { GatewayConfig } from '../config/schema.js';
import { ConnectionManager } from '../connection/manager.js';
import { SandboxConnection } from '../connection/sandbox.js';
import type { ConnectionFactory } from '../connection/types.js';
import { systemClock, type Clock } from '../domain/clock.js';
import { EventBus } from '../events/bus.js';
import { noMetrics, type MetricsSink } from '../domain/metrics.js';
import { SendService } from '../sending/send-service.js';
import { StatusReporter } from '../plans/status-reporter.js';
import { CreditLedger } from '../plans/credit-ledger.js';
import { ensureDir } from '../store/atomic-write.js';
import { CreditStore } from '../store/credits.js';
import { InstanceStore } from '../store/instances.js';
import { storePaths } from '../store/paths.js';
import { checkWebhookUrl } from '../webhooks/target-policy.js';
import { createApp, type AppOptions } from './app.js';
import { acquireDaemonLock, writeDaemonInfo } from './daemon-lock.js';
import type { AppDeps } from './deps.js';
import { initialiseDataDir } from './init.js';
import { createLogger } from './logger.js';
import { watchStore } from './store-watcher.js';

export interface DaemonOptions {
  dataDir: string;
  /** Overrides of config.json (CLI flags). */
  host?: string;
  port?: number;
  logLevel?: string;
  clock?: Clock;
  logger?: Logger;
  /** Replaces the Baileys factory (tests: a fake connection). */
  baileysFactory?: (deps: { config: GatewayConfig; logger: Logger; dataDir: string; clock: Clock }) => ConnectionFactory;
  /** Called with the secret when start initialised a fresh data dir. */
  onInitialised?: (serverSecret: string) => void;
  appOptions?: AppOptions;
  /** Parts that plug into the daemon (webhooks, flows, metrics): run after the core is built. */
  plugins?: DaemonPlugin[];
}

/** A part of the daemon with its own lifecycle; it may register event consumers and routes. */
export interface DaemonPlugin {
  name: string;
  setup(deps: AppDeps, register: { appOptions: AppOptions }): Promise<void> | void;
  /** Called on shutdown after HTTP stopped, before the store is flushed. */
  stop?(): Promise<void>;
}

export interface RunningDaemon {
  port: number;
  host: string;
  deps: AppDeps;
  server: Server;
  close(): Promise<void>;
}

/**
 * Starts the daemon: initialise a fresh data dir, take the one-daemon lock, load and validate the
 * config and the store (refusing a corrupt one), start every instance's connection, listen.
 */
export async function startDaemon(options: DaemonOptions): Promise<RunningDaemon> {
  const { dataDir } = options;
  if (!isInitialised(dataDir)) {
    const { serverSecret } = await initialiseDataDir(dataDir, {});
    options.onInitialised?.(serverSecret);
  }
  const loaded = loadConfig(dataDir);
  const config: GatewayConfig = {
    ...loaded,
    host: options.host ?? loaded.host,
    port: options.port ?? loaded.port,
    logLevel: (options.logLevel as GatewayConfig['logLevel'] | undefined) ?? loaded.logLevel,
  };
  const logger = options.logger ?? createLogger(config.logLevel);
  const clock = options.clock ?? systemClock;
  const paths = storePaths(dataDir);
  await ensureDir(paths.creditsDir);
  await ensureDir(paths.authDir);

  const releaseLock = await acquireDaemonLock(dataDir);
  try {
    const instances = new InstanceStore(dataDir, clock, config.plans.trialDays);
    await instances.load();
    const credits = new CreditStore(dataDir);
    await credits.verifyAll();
    const ledger = new CreditLedger(credits, logger);
    const bus = new EventBus(logger);
    const sandboxFactory: ConnectionFactory = (record, hooks) => new SandboxConnection(record.id, hooks, { authDir: paths.authDir, now: () => clock.now() });
    const baileysFactory = options.baileysFactory?.({ config, logger, dataDir, clock });
    const manager = new ConnectionManager({
      sandboxFactory,
      ...(baileysFactory ? { baileysFactory } : {}),
      bus,
      logger,
      pacing: config.sending,
      sendsPerMinute: config.rateLimit.sendsPerMinute,
      now: () => clock.now(),
      reportStatus: (id, change) => reporter.connectionChanged(id, change),
    });
    const reporter = new StatusReporter({ instances, ledger, manager, bus, clock, logger });

    // After the daemon's own write the loaded copy is already current: re-read only what another
    // process changed (instances.json is megabytes with 10,000 instances).
    const reload = async (): Promise<void> => {
      if (instances.changedOnDisk()) await instances.load();
      manager.sync(instances.list());
    };
    const metrics: MetricsSink = { ...noMetrics };
    const sender = new SendService({ instances, ledger, manager, clock, logger, typing: config.sending.typing, get metrics() { return deps.metrics; } });
    const deps: AppDeps = {
      sender,
      metrics,
      gauges: { outboxDepth: () => 0 },
      config,
      instances,
      credits,
      ledger,
      manager,
      bus,
      clock,
      logger,
      checkWebhookTarget: async (url) => {
        await checkWebhookUrl(url, config.webhooks.allowPrivateTargets);
      },
      reload,
    };

    const appOptions: AppOptions = { ...options.appOptions, extensions: [...(options.appOptions?.extensions ?? [])] };
    for (const plugin of options.plugins ?? []) await plugin.setup(deps, { appOptions });
    const app = createApp(deps, appOptions);
    manager.sync(instances.list());

    reporter.start();
    const stopWatching = watchStore({
      dataDir,
      creditsDir: paths.creditsDir,
      changedOnDisk: () => instances.changedOnDisk(),
      onInstances: reload,
      onCredits: (id) => ledger.invalidate(id),
      logger,
    });

    const server = createServer(app.callback());
    server.keepAliveTimeout = 5_000;
    server.headersTimeout = 15_000;
    server.requestTimeout = 120_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const port = (server.address() as AddressInfo).port;
    await writeDaemonInfo(dataDir, { pid: process.pid, host: config.host, port, startedAt: new Date().toISOString() });
    logger.info({ host: config.host, port, instances: manager.size, dataDir }, 'gateway listening');

    let closing: Promise<void> | null = null;
    const close = (): Promise<void> => {
      closing ??= (async () => {
        logger.info('shutting down: draining requests');
        stopWatching();
        reporter.stop();
        await new Promise<void>((resolve) => {
          const force = setTimeout(() => {
            server.closeAllConnections();
          }, 10_000);
          force.unref();
          server.close(() => {
            clearTimeout(force);
            resolve();
          });
          server.closeIdleConnections();
        });
        await manager.stopAll();
        for (const plugin of [...(options.plugins ?? [])].reverse()) {
          await plugin.stop?.().catch((err: unknown) => logger.error({ err, plugin: plugin.name }, 'plugin stop failed'));
        }
        await ledger.drain();
        await releaseLock();
        logger.info('stopped');
      })();
      return closing;
    };
    return { port, host: config.host, deps, server, close };
  } catch (err) {
    await releaseLock();
    throw err;
  }
}
