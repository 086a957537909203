import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context, Middleware } from 'koa';
import { GatewayError } from '../domain/errors.js';
import type { AuthFailureLimiter } from '../http/auth-limiter.js';
import { readJsonBody } from '../http/json-body.js';
import { isInstanceId } from '../domain/ids.js';
import { verifySecret } from '../domain/secrets.js';
import { SESSION_COOKIE, type PanelSessions } from './sessions.js';
import { verifyPassword } from '../domain/passwords.js';
import type { OperatorRepository } from '../storage/ports/operators.js';
import type { AuditPart } from '../audit/audit-part.js';
import { isOperatorName } from '../domain/operator-name.js';
import { setBody } from '../http/response-body.js';

/** The built front-end: `npm run build` puts it here (both from src/ under tsx and from dist/). */
export const DEFAULT_STATIC_DIR = join(fileURLToPath(new URL('../../', import.meta.url)), 'dist', 'panel', 'static');

export const PANEL_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

interface StaticFile {
  body: Buffer;
  type: string;
  immutable: boolean;
}

/** Every file of the build, read once: only these paths are ever served (no path is joined from a URL). */
function loadStatic(dir: string): Map<string, StaticFile> | null {
  if (!existsSync(join(dir, 'index.html'))) return null;
  const files = new Map<string, StaticFile>();
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const full = join(d, name);
      if (statSync(full).isDirectory()) walk(full);
      else {
        const rel = relative(dir, full).split(sep).join('/');
        files.set(rel, { body: readFileSync(full), type: TYPES[extname(name)] ?? 'application/octet-stream', immutable: rel.startsWith('assets/') });
      }
    }
  };
  walk(dir);
  return files;
}

function securityHeaders(ctx: Context): void {
  ctx.set('Content-Security-Policy', PANEL_CSP);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
}

/** Behind TLS: the daemon itself speaks HTTP, so a TLS-terminating proxy says so in X-Forwarded-Proto. */
function overTls(ctx: Context): boolean {
  return ctx.protocol === 'https' || ctx.get('x-forwarded-proto').split(',')[0]?.trim().toLowerCase() === 'https';
}

function setCookie(ctx: Context, value: string, maxAgeSeconds: number): void {
  const parts = [`${SESSION_COOKIE}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Strict', `Max-Age=${maxAgeSeconds}`];
  if (overTls(ctx)) parts.push('Secure');
  ctx.set('Set-Cookie', parts.join('; '));
}

/** A browser's sign-in form posted from another site is refused even before SameSite helps. */
function checkOrigin(ctx: Context): void {
  const origin = ctx.get('origin');
  if (origin === '') return;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    host = '';
  }
  if (host !== ctx.get('host')) throw new GatewayError('UNAUTHORIZED', 'cross-origin panel request refused');
}

export interface PanelHttpDeps {
  sessions: PanelSessions;
  instances: { get(id: string): { id: string; keyHash: string } | undefined };
  /** Operator accounts (`{"operator", "password"}` sign-ins). */
  operators?: Pick<OperatorRepository, 'get'>;
  /** Sign-ins, accepted or refused, go into the audit log. */
  audit?: AuditPart;
  serverSecretHash(): string | null;
  limiter: AuthFailureLimiter;
  idleMs: number;
  staticDir?: string;
}

const INVALID = 'invalid credentials';
const EVENTS_PATH = /^\/api\/[^/]+\/events$/;

/**
 * The panel's own HTTP: the session API under /panel/api/session and the built front-end under
 * /panel/. Everything else the panel does goes through the ordinary REST routes with the cookie.
 */
export function panelMiddleware(deps: PanelHttpDeps): Middleware {
  let files: Map<string, StaticFile> | null | undefined;
  const maxAge = Math.floor(deps.idleMs / 1000);

  const signIn = async (ctx: Context): Promise<void> => {
    checkOrigin(ctx);
    await readJsonBody(ctx);
    const body = (ctx.request as { body?: unknown }).body;
    const b = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
    const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length <= 512 ? v : undefined);
    let opened: Awaited<ReturnType<PanelSessions['open']>> | null = null;
    // Who tried: named in the audit log only when it exists (a guessed name is `anonymous`).
    let actor = 'anonymous';
    let instanceId: string | undefined;
    if (b.secret !== undefined) {
      actor = 'secret';
      const hash = deps.serverSecretHash();
      if (verifySecret(str(b.secret), hash) && hash) opened = await deps.sessions.open({ role: 'admin' }, hash);
    } else if (b.operator !== undefined) {
      const name = str(b.operator) ?? '';
      // One scrypt whether or not the operator exists: the answer never tells.
      const op = isOperatorName(name) && deps.operators ? await deps.operators.get(name) : null;
      const ok = await verifyPassword(str(b.password), op?.passwordHash);
      if (op) actor = `operator:${op.name}`;
      if (ok && op) {
        opened = await deps.sessions.open(op.role === 'admin' ? { role: 'admin', operator: op.name } : { role: 'agent', operator: op.name, instances: [...op.instances] }, op.passwordHash);
      }
    } else {
      const id = str(b.instanceId) ?? '';
      const record = isInstanceId(id) ? deps.instances.get(id) : undefined;
      if (record) {
        actor = `instance:${record.id}`;
        instanceId = record.id;
      }
      // One compare whether or not the instance exists: the answer never tells.
      if (verifySecret(str(b.apiKey), record?.keyHash) && record) opened = await deps.sessions.open({ role: 'instance', instanceId: record.id }, record.keyHash);
    }
    const signin = { actor, action: 'panel.signin', ...(instanceId ? { instanceId } : {}) };
    if (!opened) {
      // Counted first: past the limit (429) a failure is not recorded, so a spray of guesses
      // cannot fill the audit log.
      deps.limiter.fail(ctx.ip);
      await deps.audit?.record({ ...signin, outcome: 'UNAUTHORIZED' });
      throw new GatewayError('UNAUTHORIZED', INVALID);
    }
    await deps.audit?.record({ ...signin, outcome: 'ok' });
    setCookie(ctx, opened.token, maxAge);
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 201;
    setBody(ctx, { success: true, ...opened.view });
  };

  const current = (ctx: Context): void => {
    const s = deps.sessions.fromRequest(ctx);
    if (!s) throw new GatewayError('UNAUTHORIZED', 'not signed in to the panel');
    ctx.set('Cache-Control', 'no-store');
    setBody(ctx, { success: true, ...deps.sessions.view(s) });
  };

  const signOut = async (ctx: Context): Promise<void> => {
    const s = deps.sessions.fromRequest(ctx);
    if (s) {
      deps.sessions.checkCsrf(ctx, s);
      await deps.sessions.close(s);
    }
    setCookie(ctx, '', 0);
    setBody(ctx, { success: true, signedOut: true });
  };

  const serveStatic = (ctx: Context): void => {
    files ??= loadStatic(deps.staticDir ?? DEFAULT_STATIC_DIR);
    securityHeaders(ctx);
    if (!files) {
      ctx.status = 503;
      ctx.type = 'text/plain';
      ctx.body = 'The panel is not built: run `npm run build`.\n';
      return;
    }
    const rel = ctx.path.slice('/panel/'.length);
    // Unknown paths are the app's own pages (client-side routes): they get index.html.
    const file = files.get(rel) ?? (rel.startsWith('assets/') ? undefined : files.get('index.html'));
    if (!file) throw new GatewayError('NOT_FOUND', `no file ${ctx.path.slice(0, 100)}`);
    ctx.status = 200;
    ctx.type = file.type;
    ctx.set('Cache-Control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    ctx.body = ctx.method === 'HEAD' ? null : file.body;
  };

  /**
   * A live event stream opened with a session cookie is cut when the session ends (sign-out, idle
   * expiry, rotation of the key or secret it was opened with): the stream is not activity, and an
   * ended session must not go on receiving events.
   */
  const watchStream = (ctx: Context): void => {
    const s = deps.sessions.fromRequest(ctx);
    if (!s) return;
    const cancel = deps.sessions.onEnd(s, () => ctx.req.socket.destroy());
    ctx.req.once('close', cancel);
  };

  return async (ctx, next) => {
    const path = ctx.path;
    // A session opened on another node (several hosts) is read from the store first.
    if (ctx.get('cookie') !== '') await deps.sessions.preload(ctx);
    // Requests are a clock too: an expired session's streams are cut at the next request (and by a timer).
    deps.sessions.sweepWatched();
    if (path !== '/panel' && !path.startsWith('/panel/')) {
      if (ctx.method === 'GET' && EVENTS_PATH.test(path) && ctx.get('cookie') !== '') watchStream(ctx);
      return next();
    }
    if (path === '/panel/api/session') {
      ctx.set('X-Content-Type-Options', 'nosniff');
      if (ctx.method === 'POST') return signIn(ctx);
      if (ctx.method === 'GET') return current(ctx);
      if (ctx.method === 'DELETE') return signOut(ctx);
      throw new GatewayError('NOT_FOUND', `method ${ctx.method} not allowed here`);
    }
    if (path.startsWith('/panel/api/')) throw new GatewayError('NOT_FOUND', `no route for ${ctx.method} ${path.slice(0, 100)}`);
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw new GatewayError('NOT_FOUND', `method ${ctx.method} not allowed here`);
    if (path === '/panel') {
      securityHeaders(ctx);
      ctx.redirect('/panel/');
      return;
    }
    serveStatic(ctx);
  };
}
