import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/schema.js';
import type { Clock } from '../domain/clock.js';
import type { MetricsSink } from '../domain/metrics-sink.js';
import type { Timers } from '../domain/timers.js';
import type { DaemonMode, Feature } from '../features/feature.js';
import type { InstanceRepository } from '../storage/ports/instances.js';
import type { OutboxStore } from '../storage/ports/outbox.js';
import { WebhookDeliverer } from './deliverer.js';
import { webhookRoutes } from './routes.js';
import type { AuditPart } from '../audit/audit-part.js';
import { systemResolver, type Resolver } from './target-policy.js';

/** Test seams of webhook delivery; production uses the defaults. */
export interface WebhookSeams {
  /** Jitter source in [0, 1); 0.5 gives the exact configured delays. */
  random?: () => number;
  /** DNS for the delivery-time SSRF check and the connection itself. */
  resolver?: Resolver;
  userAgent?: string;
  /** How long shutdown waits for attempts in flight before aborting them (they stay pending). */
  stopGraceMs?: number;
}

/** What webhook delivery is built from. */
export interface WebhooksParts {
  mode: DaemonMode;
  config: Pick<GatewayConfig, 'webhooks'>;
  clock: Clock;
  timers: Timers;
  logger: Logger;
  metrics: MetricsSink;
  instances: InstanceRepository;
  outbox: OutboxStore;
  /** Whether this node delivers an instance's webhooks (several hosts: the instances it owns). */
  serves?: (instanceId: string) => boolean;
  /** Webhook changes go into the audit log. */
  audit?: AuditPart;
}

export const DEFAULT_USER_AGENT = 'wa-gateway-webhooks/0.1 (+https://www.standardwebhooks.com)';

/**
 * Webhook delivery: the durable outbox (the storage engine's, `core.storage.outbox`) is a critical
 * event consumer (an event that could not be stored fails its publish, so it is not acknowledged
 * upstream); the daemon delivers, a CLI command (no daemon) only reads, re-queues and removes.
 */
export async function webhooksFeature(core: WebhooksParts, seams: WebhookSeams = {}): Promise<Feature & { deliverer: WebhookDeliverer }> {
  const { clock } = core;
  const deliverer = new WebhookDeliverer({
    store: core.outbox,
    settings: core.config.webhooks,
    instances: { get: (id) => (core.serves && !core.serves(id) ? undefined : core.instances.get(id)) },
    clock,
    // Retries wait on a clock that does not step with the wall clock (issue 21: a retry due in
    // 5 s waited an hour after the clock was set back); a test clock without one drives both.
    monotonic: clock.monotonic ? clock.monotonic.bind(clock) : () => clock.now(),
    timers: core.timers,
    random: seams.random ?? Math.random,
    resolver: seams.resolver ?? systemResolver,
    logger: core.logger.child({ part: 'webhooks' }),
    metrics: core.metrics,
    userAgent: seams.userAgent ?? DEFAULT_USER_AGENT,
    stopGraceMs: seams.stopGraceMs ?? 2_000,
  });
  await deliverer.load();
  return {
    name: 'webhooks',
    deliverer,
    routes: webhookRoutes(core, deliverer),
    consumers: [{ consumer: deliverer, critical: true }],
    gauges: { gateway_outbox_depth: { help: 'Webhook deliveries waiting to be delivered (pending or retrying).', read: () => deliverer.pendingCount() } },
    start() {
      if (core.mode === 'daemon') deliverer.start();
    },
    removeInstance: (id) => deliverer.outbox.removeInstance(id),
    stop: () => deliverer.stop(),
  };
}
