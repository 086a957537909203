import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import { GatewayError } from '../domain/errors.js';
import type { InstanceRecord } from '../domain/types.js';
import type { SessionResolver } from '../http/auth.js';
import type { Principal } from '../http/route.js';

export const SESSION_COOKIE = 'gw_panel';
export const CSRF_HEADER = 'x-csrf-token';

/** Sessions kept at once; signing in past it ends the least recently used one. */
export const MAX_SESSIONS = 1_000;

export type PanelRole = { role: 'admin' } | { role: 'instance'; instanceId: string };

interface Session {
  /** What the cookie's token hashes to (the map key): the token itself is never kept. */
  readonly key: string;
  readonly sessionId: string;
  readonly csrf: string;
  readonly who: PanelRole;
  /** The credential it was opened with: rotating it (key or server secret) ends the session. */
  readonly credentialHash: string;
  lastSeen: number;
}

export interface SessionView {
  sessionId: string;
  csrfToken: string;
  role: 'admin' | 'instance';
  instanceId: string | null;
}

export interface PanelSessionDeps {
  instances: { get(id: string): InstanceRecord | undefined };
  serverSecretHash(): string | null;
  idleMs: number;
  now(): number;
  max?: number;
}

const tokenKey = (token: string): string => createHash('sha256').update(token, 'utf8').digest('base64url');
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The value of one cookie in a Cookie header (no decoding: the token is base64url). */
export function readCookie(header: string, name: string): string | undefined {
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * Panel sessions, in memory: bounded (least recently used goes first), ended after `idleMs`
 * without a request, by sign-out, or when the credential they were opened with is rotated. A
 * daemon restart signs everyone out. Each session has a CSRF token that state-changing requests
 * made with its cookie must echo in X-CSRF-Token.
 */
export class PanelSessions implements SessionResolver {
  private readonly sessions = new Map<string, Session>();
  private readonly max: number;

  constructor(private readonly deps: PanelSessionDeps) {
    this.max = deps.max ?? MAX_SESSIONS;
  }

  /** Opens a session; returns the cookie token (once) and the session. */
  open(who: PanelRole, credentialHash: string): { token: string; view: SessionView } {
    this.sweep();
    while (this.sessions.size >= this.max) {
      const oldest = this.sessions.keys().next().value;
      if (oldest === undefined) break;
      this.sessions.delete(oldest);
    }
    const token = randomBytes(32).toString('base64url');
    const session: Session = {
      key: tokenKey(token),
      sessionId: randomBytes(9).toString('base64url'),
      csrf: randomBytes(24).toString('base64url'),
      who,
      credentialHash,
      lastSeen: this.deps.now(),
    };
    this.sessions.set(session.key, session);
    return { token, view: this.view(session) };
  }

  /** The live session a cookie token names (touching it), or null. */
  find(token: string | undefined): Session | null {
    if (!token) return null;
    const key = tokenKey(token);
    const s = this.sessions.get(key);
    if (!s) return null;
    const now = this.deps.now();
    if (now - s.lastSeen >= this.deps.idleMs || !this.credentialStillValid(s)) {
      this.sessions.delete(key);
      return null;
    }
    s.lastSeen = now;
    // Re-inserted: the map's order is least recently used first.
    this.sessions.delete(key);
    this.sessions.set(key, s);
    return s;
  }

  /** The session of a request's cookie, or null. */
  fromRequest(ctx: Context): Session | null {
    return this.find(readCookie(ctx.get('cookie'), SESSION_COOKIE));
  }

  /** Throws 401 unless a state-changing request carries the session's CSRF token. */
  checkCsrf(ctx: Context, s: Session): void {
    if (SAFE_METHODS.has(ctx.method)) return;
    if (!sameToken(ctx.get(CSRF_HEADER), s.csrf)) throw new GatewayError('UNAUTHORIZED', 'missing or invalid X-CSRF-Token for this panel session');
  }

  close(s: Session): void {
    this.sessions.delete(s.key);
  }

  view(s: Session): SessionView {
    return { sessionId: s.sessionId, csrfToken: s.csrf, role: s.who.role, instanceId: s.who.role === 'instance' ? s.who.instanceId : null };
  }

  /** SessionResolver: the principal of a request that carries a live session cookie. */
  principal(ctx: Context): Principal | null {
    const s = this.fromRequest(ctx);
    if (!s) return null;
    this.checkCsrf(ctx, s);
    return s.who.role === 'admin'
      ? { kind: 'session', role: 'admin', sessionId: s.sessionId }
      : { kind: 'session', role: 'instance', instanceId: s.who.instanceId, sessionId: s.sessionId };
  }

  size(): number {
    return this.sessions.size;
  }

  private credentialStillValid(s: Session): boolean {
    const current = s.who.role === 'admin' ? this.deps.serverSecretHash() : this.deps.instances.get(s.who.instanceId)?.keyHash;
    return typeof current === 'string' && sameToken(current, s.credentialHash);
  }

  private sweep(): void {
    const now = this.deps.now();
    for (const [k, s] of this.sessions) if (now - s.lastSeen >= this.deps.idleMs) this.sessions.delete(k);
  }
}
