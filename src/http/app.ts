import { randomBytes } from 'node:crypto';
import Koa, { type Context, type Middleware } from 'koa';
import type { Logger } from 'pino';
import Value from 'typebox/value';
import type { MetricsSink } from '../domain/metrics-sink.js';
import { GatewayError } from '../domain/errors.js';
import { parseInput } from '../schemas/check.js';
import { authenticate, type AuthDeps } from './auth.js';
import { ControlRequests } from './control-requests.js';
import { errorMiddleware } from './error-middleware.js';
import { readJsonBody } from './json-body.js';
import { setBody } from './response-body.js';
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
  // The line holds no field the logger redacts (ids, method, route template, status, time, address:
  // strings and numbers), so it is written without the redaction pass: its wildcard paths
  // ('*.apiKey') run on every field and were more than half of the line's cost (pino 10, this line:
  // 4.0 -> 1.8 µs). Everything else about the line is the same.
  const lines = deps.logger.child({}, { redact: { paths: [] } });
  return async (ctx, next) => {
    const started = performance.now();
    const given = ctx.req.headers['x-request-id'];
    const requestId = (typeof given === 'string' ? given.slice(0, 64) : '') || `${prefix}-${(counter += 1).toString(36)}`;
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      const ms = performance.now() - started;
      const instanceId = (ctx.state as { instanceId?: string }).instanceId;
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      deps.metrics.request({ method: ctx.method, route, status: ctx.status, ms });
      if (ctx.status !== 200 || ctx.path !== '/healthz') {
        lines.info({ requestId, method: ctx.method, route, instanceId, status: ctx.status, ms: Math.round(ms * 10) / 10, ip: ctx.ip }, 'request');
      }
    }
  };
}

/** Bodies a route that takes none may still carry: `{}` (some clients always send one), nothing else. */
const NO_BODY_LIMIT = 4 * 1024;

/**
 * A route without a body refuses one with fields (400 naming the first), as a route with a body
 * refuses unknown fields: `{"unread": false}` to POST /chats/{chatId}/unread must not mark the
 * chat unread as if it had been understood.
 */
async function takesNoBody(ctx: Context): Promise<void> {
  await readJsonBody(ctx, NO_BODY_LIMIT);
  const raw = (ctx.request as { body?: unknown }).body;
  if (raw === undefined) return;
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
    const first = Object.keys(raw)[0];
    if (first === undefined) return;
    throw new GatewayError('INVALID_FIELD', `${first}: unknown field (this route takes no body)`);
  }
  throw new GatewayError('INVALID_FIELD', 'this route takes no body');
}

/** The handler of one route: auth, then input (body and query against their schemas), then the route. */
function handlerOf(def: RouteDef, deps: AppDeps): Middleware {
  return async (ctx: Context) => {
    const who = authenticate(ctx, def.auth, deps.auth, { operationId: def.operationId, bearer: def.bearer === true });
    if (who.instance) (ctx.state as { instanceId?: string }).instanceId = who.instance.id;
    if (who.retiring) await who.retiring;
    let body: unknown;
    if (def.body) {
      await readJsonBody(ctx);
      const raw = ctx.request.body ?? {};
      body = def.parse ? def.parse(raw) : parseInput(def.body, raw);
    } else if (!def.multipart && def.method !== 'GET') {
      await takesNoBody(ctx);
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
      setBody(ctx, result);
    }
  };
}

/** A route path as segments: a literal (lower case) or a parameter's name. */
type Segment = { literal: string; param?: undefined } | { literal?: undefined; param: string };

interface CompiledRoute {
  path: string;
  segments: Segment[];
  handler: Middleware;
}

/** The literal segment of a route, compared as path-to-regexp's `i` flag does: ASCII letters in any case. */
function sameLiteral(segment: string, literal: string): boolean {
  if (segment === literal) return true;
  if (segment.length !== literal.length) return false;
  for (let i = 0; i < segment.length; i++) {
    const c = segment.charCodeAt(i);
    const l = literal.charCodeAt(i);
    if (c !== l && !(c >= 65 && c <= 90 && c + 32 === l)) return false;
  }
  return true;
}

function decodeParam(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value; // as @koa/router: a malformed escape is passed on as it is
  }
}

/**
 * Route matching, hand-written instead of @koa/router. Measured with `npm run bench` (send run,
 * `node --cpu-prof`): @koa/router was about 8 % of the daemon's CPU per send (it tests every
 * route's regular expression on each request, composes a new middleware chain per request and
 * calls debug() for every route it tests). Every path here is literal segments and `:name`
 * segments, so a match is a comparison of segments, and this keeps @koa/router's answers with
 * its defaults (path-to-regexp 8): literals match in any ASCII case, one trailing slash is
 * allowed, a parameter is one non-empty segment, percent-decoded (kept as it is when malformed),
 * the first route registered wins, GET routes also answer HEAD; anything else falls through (404).
 */
class RouteTable {
  /** Per method, the routes by their number of segments, in the order they were registered. */
  private readonly routes = new Map<string, CompiledRoute[][]>();

  add(method: string, path: string, handler: Middleware): void {
    if (!path.startsWith('/')) throw new Error(`route path must start with "/": ${path}`);
    const segments = path
      .slice(1)
      .split('/')
      .map((s): Segment => {
        if (/^:\w+$/.test(s)) return { param: s.slice(1) };
        if (s === '' || /[:*?(){}]/.test(s)) throw new Error(`unsupported route path ${path}: literal and :name segments only`);
        return { literal: s.toLowerCase() };
      });
    for (const m of method === 'GET' ? ['GET', 'HEAD'] : [method]) {
      let bySize = this.routes.get(m);
      if (!bySize) this.routes.set(m, (bySize = []));
      (bySize[segments.length] ??= []).push({ path, segments, handler });
    }
  }

  find(method: string, path: string): { route: CompiledRoute; params: Record<string, string> } | null {
    const bySize = this.routes.get(method);
    if (!bySize || path.charCodeAt(0) !== 47) return null;
    const end = path.length > 1 && path.charCodeAt(path.length - 1) === 47 ? path.length - 1 : path.length;
    const parts = path.slice(1, end).split('/');
    const candidates = bySize[parts.length];
    if (!candidates) return null;
    next: for (const route of candidates) {
      for (let i = 0; i < parts.length; i++) {
        const seg = route.segments[i]!;
        const part = parts[i]!;
        if (seg.literal !== undefined ? !sameLiteral(part, seg.literal) : part === '') continue next;
      }
      const params: Record<string, string> = {};
      for (let i = 0; i < parts.length; i++) {
        const name = route.segments[i]!.param;
        if (name !== undefined) params[name] = decodeParam(parts[i]!);
      }
      return { route, params };
    }
    return null;
  }
}

/** Builds the Koa app from route definitions; it does not listen (the boot module does). */
/** The app, and the set its control socket's requests go into (trusted like the server secret). */
export interface GatewayApp {
  app: Koa;
  control: ControlRequests;
}

export function createApp(deps: AppDeps): GatewayApp {
  const control = new ControlRequests();
  deps = { ...deps, auth: { ...deps.auth, control } };
  const app = new Koa({ proxy: false });
  app.silent = true;
  const table = new RouteTable();
  for (const def of deps.routes) table.add(def.method, def.path, handlerOf(def, deps));
  app.use(requestLog(deps));
  app.use(errorMiddleware(deps.logger, control));
  for (const m of deps.before ?? []) app.use(m);
  app.use((ctx, next) => {
    const found = table.find(ctx.method, ctx.path);
    if (!found) return next();
    // What @koa/router set and this code reads: the parameters and the route template (logs, metrics).
    ctx.params = found.params;
    (ctx.request as { params?: Record<string, string> }).params = found.params;
    (ctx as { _matchedRoute?: string })._matchedRoute = found.route.path;
    return found.route.handler(ctx, next);
  });
  return { app, control };
}
