import type { DaemonPlugin } from '../daemon/boot.js';
import { GatewayError } from '../domain/errors.js';
import { noMetrics } from '../domain/metrics.js';
import { metricsAllowed } from './guard.js';
import { createGatewayMetrics, type GatewayMetrics } from './prometheus.js';

/**
 * `GET /metrics` in Prometheus text format. Guarded by `metrics.mode`: "off" and, under "local"
 * (the default), any non-loopback client get the same 404 as an unknown route, so the answer does
 * not reveal that the endpoint exists.
 */
export function createMetricsPlugin(options: { defaultMetrics?: boolean } = {}): DaemonPlugin {
  let metrics: GatewayMetrics | null = null;
  return {
    name: 'metrics',
    setup(deps, { appOptions }) {
      const mode = deps.config.metrics.mode;
      if (mode !== 'off') {
        const created = createGatewayMetrics(
          {
            gauges: () => deps.gauges,
            connectionStatuses: function* () {
              for (const entry of deps.manager.all()) yield entry.connection.status;
            },
          },
          options,
        );
        metrics = created;
        // Fill the daemon's own sink in place, so a part that kept a reference to it reports here
        // too, whatever the plugin order; never mutate the shared no-op object.
        if (deps.metrics === noMetrics) deps.metrics = created.sink;
        else Object.assign(deps.metrics, created.sink);
      }
      appOptions.extensions ??= [];
      appOptions.extensions.push((router) => {
        router.get('/metrics', async (ctx) => {
          if (metrics === null || !metricsAllowed(mode, ctx.req.socket.remoteAddress)) {
            throw new GatewayError('NOT_FOUND', `no route for ${ctx.method} ${ctx.path.slice(0, 100)}`);
          }
          const text = await metrics.registry.metrics();
          ctx.set('Cache-Control', 'no-store');
          ctx.type = metrics.registry.contentType;
          ctx.body = text;
        });
      });
    },
    async stop() {
      metrics?.registry.clear();
    },
  };
}
