import { randomBytes } from 'node:crypto';
import Koa, { type Middleware } from 'koa';
import Router from '@koa/router';
import type { SendService } from '../sending/send-service.js';
import { AuthFailureLimiter } from './auth-limiter.js';
import { requireInstanceKey, requireServerSecret, type InstanceState } from './auth.js';
import type { AppDeps } from './deps.js';
import { errorMiddleware } from './error-middleware.js';
import { instanceRoutes } from './routes/instances.js';
import { messageRoutes } from './routes/messages.js';
import { sandboxRoutes } from './routes/sandbox.js';
import { statusRoutes } from './routes/status.js';
import { webhookRoutes } from './routes/webhook.js';

/** Route groups added by later parts (flows, metrics, docs) without touching this file's core. */
export type RouteExtension = (router: Router, parts: { deps: AppDeps; auth: ReturnType<typeof requireInstanceKey>; sender: SendService }) => void;

export interface AppOptions {
  extensions?: RouteExtension[];
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
      const instanceId = (ctx.state as Partial<InstanceState>).instance?.id;
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      deps.metrics.request({ method: ctx.method, route: String(route), status: ctx.status, ms });
      if (ctx.path !== '/healthz' || ctx.status !== 200) {
        deps.logger.info({ requestId, method: ctx.method, route, instanceId, status: ctx.status, ms: Math.round(ms * 10) / 10, ip: ctx.ip }, 'request');
      }
    }
  };
}

/** Builds the Koa app from its parts; it does not listen (only the boot module does). */
export function createApp(deps: AppDeps, options: AppOptions = {}): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true;
  const router = new Router();
  const limiter = new AuthFailureLimiter(deps.config.rateLimit.authFailures, deps.config.rateLimit.authWindowMs, () => deps.clock.now());
  const auth = requireInstanceKey(deps, limiter);
  const secretAuth = requireServerSecret(deps, limiter);
  const sender = deps.sender;

  router.get('/healthz', (ctx) => {
    ctx.body = { ok: true };
  });
  instanceRoutes(router, deps, secretAuth);
  messageRoutes(router, deps, auth, sender);
  statusRoutes(router, deps, auth);
  webhookRoutes(router, deps, auth);
  sandboxRoutes(router, deps, auth);
  for (const extend of options.extensions ?? []) extend(router, { deps, auth, sender });

  app.use(requestLog(deps));
  app.use(errorMiddleware(deps.logger));
  app.use(router.routes());
  return app;
}
