import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { isErrorCode } from '../domain/errors.js';
import type { MetricsSink } from '../domain/metrics-sink.js';
import type { ConnectionStatus } from '../domain/types.js';
import { collectProcessMetrics } from './process-metrics.js';

/** What the collectors read at scrape time. */
export interface MetricsSources {
  connectionStatuses(): Iterable<ConnectionStatus>;
}

export interface GatewayMetrics {
  /** A registry of this daemon alone: several daemons in one process never share counters. */
  registry: Registry;
  sink: MetricsSink;
  /** A gauge a feature provides, read at scrape time. */
  addGauge(name: string, help: string, read: () => number): void;
}

const CONNECTION_STATUSES: readonly ConnectionStatus[] = ['initializing', 'qr_code_generated', 'connected', 'disconnected'];
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Label values come from a closed set, so a hostile client cannot grow the series count. */
function errorCodeLabel(code: string | undefined): string {
  if (code === undefined) return '';
  return isErrorCode(code) ? code : 'OTHER';
}

function methodLabel(method: string): string {
  return METHODS.has(method) ? method : 'OTHER';
}

/** How often the event-loop lag is sampled (see createGatewayMetrics). */
const LAG_SAMPLE_MS = 20;

/**
 * The gateway's Prometheus metrics, plus prom-client's process metrics (CPU, memory, file
 * descriptors, GC and event-loop lag as `nodejs_eventloop_lag_*`).
 */
export function createGatewayMetrics(sources: MetricsSources, options: { defaultMetrics?: boolean } = {}): GatewayMetrics {
  const registry = new Registry();
  const registers = [registry];
  // The event-loop lag histogram samples on a timer: prom-client's default, every 10 ms, woke an
  // idle daemon ~200 times a second (strace: epoll_pwait), 1 % of a core on the 2-core machine with
  // nothing to do. Every 20 ms keeps a stall's length within 20 ms of the truth at half the wake-ups.
  if (options.defaultMetrics !== false) collectProcessMetrics(registry, LAG_SAMPLE_MS);

  const sends = new Counter({
    name: 'gateway_sends_total',
    help: 'Send attempts (API and chatbot flows) by result: sent, refused (4xx) or failed (5xx); code is the error code.',
    labelNames: ['result', 'code'] as const,
    registers,
  });
  const credits = new Counter({ name: 'gateway_credits_spent_total', help: 'Credits debited for sent messages.', registers });
  const deliveries = new Counter({
    name: 'gateway_webhook_deliveries_total',
    help: 'Webhook delivery attempts by result: delivered, retry (will be tried again) or failed (gave up).',
    labelNames: ['result'] as const,
    registers,
  });
  const requests = new Counter({
    name: 'gateway_http_requests_total',
    help: 'HTTP requests by method, route template and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'gateway_http_request_duration_seconds',
    help: 'HTTP request duration by method and route template.',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  new Gauge({
    name: 'gateway_connections',
    help: 'WhatsApp connections (one per instance) by connection status.',
    labelNames: ['status'] as const,
    registers,
    collect() {
      const counts = new Map<ConnectionStatus, number>(CONNECTION_STATUSES.map((s) => [s, 0]));
      for (const status of sources.connectionStatuses()) counts.set(status, (counts.get(status) ?? 0) + 1);
      for (const [status, n] of counts) this.set({ status }, n);
    },
  });

  // Known series start at 0, so rate() works from the first scrape.
  sends.inc({ result: 'sent', code: '' }, 0);
  for (const result of ['delivered', 'retry', 'failed'] as const) deliveries.inc({ result }, 0);

  const sink: MetricsSink = {
    send(result, code) {
      sends.inc({ result, code: result === 'sent' ? '' : errorCodeLabel(code) });
    },
    creditsSpent(amount) {
      if (amount > 0) credits.inc(amount);
    },
    webhookDelivery(result) {
      deliveries.inc({ result });
    },
    request({ method, route, status, ms }) {
      const m = methodLabel(method);
      requests.inc({ method: m, route, status: String(status) });
      duration.observe({ method: m, route }, ms / 1000);
    },
  };
  const addGauge = (name: string, help: string, read: () => number): void => {
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(read());
      },
    });
  };
  return { registry, sink, addGauge };
}
