import type { Registry } from 'prom-client';
import Type from 'typebox';
import { GatewayError } from '../domain/errors.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import type { Feature } from '../features/feature.js';
import { metricsAllowed, type MetricsMode } from './guard.js';

/**
 * `GET /metrics` in Prometheus text format, guarded by `metrics.mode`: "off" and, under "local"
 * (the default), any non-loopback client get the same 404 as an unknown route, so the answer does
 * not reveal that the endpoint exists.
 */
export function metricsFeature(parts: { mode: MetricsMode; registry: Registry | null }): Feature {
  return { name: 'metrics', routes: metricsRoutes(parts.mode, parts.registry) };
}

function metricsRoutes(mode: MetricsMode, registry: Registry | null): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/metrics',
      auth: 'public',
      operationId: 'metrics',
      summary: 'Prometheus metrics (loopback clients only by default: metrics.mode)',
      tags: ['operations'],
      response: { description: 'Prometheus text format.', contentType: 'text/plain; version=0.0.4', schema: Type.String() },
      errors: ['NOT_FOUND'],
      async handle({ koa }) {
        if (registry === null || !metricsAllowed(mode, koa.req.socket.remoteAddress)) {
          throw new GatewayError('NOT_FOUND', `no route for ${koa.method} ${koa.path.slice(0, 100)}`);
        }
        const text = await registry.metrics();
        koa.set('Cache-Control', 'no-store');
        koa.type = registry.contentType;
        koa.body = text;
        return undefined;
      },
    }),
  ];
}
