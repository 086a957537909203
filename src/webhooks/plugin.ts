import type { DaemonPlugin } from '../daemon/boot.js';
import type { Clock } from '../domain/clock.js';
import { WebhookDeliverer } from './deliverer.js';
import { clearRequests, watchRequests } from './requeue-watcher.js';
import { systemResolver, type Resolver } from './target-policy.js';
import { systemTimers, type Timers } from './timers.js';

export interface WebhookPluginOptions {
  /** Time for scheduling decisions and timestamps; default the daemon's clock. */
  clock?: Clock;
  /** How retries wait; tests pass ManualTimers to run a schedule of hours without sleeping. */
  timers?: Timers;
  /** Jitter source in [0, 1); 0.5 gives the exact configured delays. */
  random?: () => number;
  /** DNS for the delivery-time SSRF check and the connection itself. */
  resolver?: Resolver;
  userAgent?: string;
  /** How often the daemon looks for CLI redelivery requests (it also watches the directory). */
  requestPollMs?: number;
  /** How long shutdown waits for attempts in flight before aborting them (they stay pending). */
  stopGraceMs?: number;
}

export const DEFAULT_USER_AGENT = 'wa-gateway-webhooks/0.1 (+https://www.standardwebhooks.com)';

/** The running plugin also exposes its deliverer (tests, other plugins) once set up. */
export interface WebhookPlugin extends DaemonPlugin {
  readonly deliverer: WebhookDeliverer | null;
}

/**
 * Webhook delivery as a daemon part: loads and resumes the on-disk outbox, registers the outbox
 * as a critical event consumer (an event that could not be stored fails its publish, so it is not
 * acknowledged upstream), fills the outbox-depth gauge, and picks up CLI redeliveries.
 */
export function createWebhookPlugin(options: WebhookPluginOptions = {}): WebhookPlugin {
  let deliverer: WebhookDeliverer | null = null;
  let stopWatching: (() => void) | null = null;
  return {
    name: 'webhooks',
    get deliverer() {
      return deliverer;
    },
    async setup(deps) {
      const instance = new WebhookDeliverer({
        dataDir: deps.instances.paths.dataDir,
        settings: deps.config.webhooks,
        instances: deps.instances,
        clock: options.clock ?? deps.clock,
        timers: options.timers ?? systemTimers,
        random: options.random ?? Math.random,
        resolver: options.resolver ?? systemResolver,
        logger: deps.logger.child({ part: 'webhooks' }),
        metrics: () => deps.metrics,
        userAgent: options.userAgent ?? DEFAULT_USER_AGENT,
        stopGraceMs: options.stopGraceMs ?? 2_000,
      });
      // Nudges from before this start are stale: their deliveries load as pending below.
      await clearRequests(instance.outbox.paths.requestsDir);
      await instance.outbox.load();
      deliverer = instance;
      deps.bus.register(instance, { critical: true });
      deps.gauges.outboxDepth = () => instance.pendingCount();
      stopWatching = watchRequests({
        dir: instance.outbox.paths.requestsDir,
        pollMs: options.requestPollMs ?? 250,
        onRequest: (instanceId, deliveryId) => instance.requeued(instanceId, deliveryId),
        logger: deps.logger,
      });
      instance.start();
    },
    async stop() {
      stopWatching?.();
      stopWatching = null;
      await deliverer?.stop();
    },
  };
}
