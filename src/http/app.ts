import { randomBytes } from 'node:crypto';
import Koa, { type Context, type Middleware } from 'koa';
import Router from '@koa/router';
import type { Logger } from 'pino';
import Value from 'typebox/value';
import type { MetricsSink } from '../metrics/sink.js';
import { parseInput } from '../schemas/check.js';
import { authenticate, type AuthDeps } from './auth.js';
import { errorMiddleware } from './error-middleware.js';
import { readJsonBody } from './json-body.js';
import type { RouteContext, RouteDef } from './route.js';

export interface AppDeps {
  routes: readonly RouteDef[];
  auth: AuthDeps;
  logger: Logger;
  metrics: MetricsSink;
  /** Middleware that runs before routing (the panel's static files and security headers). */
  before?: readonly Middleware[];
}

/**
 * One JSON log line per request: id, instance, status, time; never a key or a message body.
 * Request ids are a per-process random prefix and a counter: unique, and cheaper than a UUID each.
 */
function requestLog(deps: AppDeps): Middleware {
  const prefix = randomBytes(4).toString('hex');
  let counter = 0;
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    const requestId = ctx.get('x-request-id').slice(0, 64) || `${prefix}-${(counter += 1).toString(36)}`;
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const instanceId = (ctx.state as { instanceId?: string }).instanceId;
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      deps.metrics.request({ method: ctx.method, route: String(route), status: ctx.status, ms });
      if (ctx.path !== '/healthz' || ctx.status !== 200) {
        deps.logger.info({ requestId, method: ctx.method, route, instanceId, status: ctx.status, ms: Math.round(ms * 10) / 10, ip: ctx.ip }, 'request');
      }
    }
  };
}

/** The handler of one route: auth, then input (body and query against their schemas), then the route. */
function handlerOf(def: RouteDef, deps: AppDeps): Middleware {
  return async (ctx: Context) => {
    const who = authenticate(ctx, def.auth, deps.auth);
    if (who.instance) (ctx.state as { instanceId?: string }).instanceId = who.instance.id;
    let body: unknown;
    if (def.body) {
      await readJsonBody(ctx);
      const raw = ctx.request.body ?? {};
      body = def.parse ? def.parse(raw) : parseInput(def.body, raw);
    }
    let query: unknown = {};
    if (def.query) query = parseInput(def.query, Value.Convert(def.query, { ...ctx.query }));
    const routeCtx: RouteContext<unknown, unknown> = {
      koa: ctx,
      params: ctx.params as Record<string, string>,
      body,
      query,
      principal: who.principal,
      instance: who.instance as RouteContext<unknown, unknown>['instance'],
    };
    const result = await def.handle(routeCtx);
    if (result !== undefined) {
      ctx.status = def.status ?? 200;
      ctx.body = result;
    }
  };
}

/** Builds the Koa app from route definitions; it does not listen (the boot module does). */
export function createApp(deps: AppDeps): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true;
  const router = new Router();
  for (const def of deps.routes) {
    const method = def.method.toLowerCase() as 'get' | 'post' | 'put' | 'delete';
    router[method](def.path, handlerOf(def, deps));
  }
  app.use(requestLog(deps));
  app.use(errorMiddleware(deps.logger));
  for (const m of deps.before ?? []) app.use(m);
  app.use(router.routes());
  return app;
}
