import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import { GatewayError } from '../domain/errors.js';
import type { InstanceRecord } from '../schemas/instance.js';
import type { SessionResolver } from '../http/auth.js';
import type { Principal } from '../http/route.js';
import type { SessionStore } from '../storage/ports/sessions.js';

export const SESSION_COOKIE = 'gw_panel';
export const CSRF_HEADER = 'x-csrf-token';
/**
 * Sent by the panel's own background refreshes (status polling, the session check): such a
 * request is served but does not count as activity, so a panel left open still ends after the
 * idle time.
 */
export const BACKGROUND_HEADER = 'x-panel-background';

/** How often sessions holding an event stream are checked, so an ended session's stream is cut. */
export const STREAM_SWEEP_MS = 30_000;

/**
 * Sessions one principal (the admin, one instance, one operator) keeps at once; its next sign-in
 * ends its least recently used one. Bounded per principal, so no tenant's sign-ins can end another
 * principal's session (a global LRU let 1,050 instance sign-ins sign the admin out).
 */
export const MAX_SESSIONS_PER_PRINCIPAL = 20;

/** A memory bound for all sessions together: past it sign-ins are refused (429), nobody is signed out. */
export const MAX_SESSIONS = 100_000;

/**
 * Who a session is: the server secret's admin, an instance's key holder, or an operator (an admin
 * operator is `admin` with its name; an agent has its instances).
 */
export type PanelRole = { role: 'admin'; operator?: string } | { role: 'instance'; instanceId: string } | { role: 'agent'; operator: string; instances: string[] };

interface Session {
  /** What the cookie's token hashes to (the map key): the token itself is never kept. */
  readonly key: string;
  readonly sessionId: string;
  readonly csrf: string;
  readonly who: PanelRole;
  /** The credential it was opened with: rotating it (key or server secret) ends the session. */
  readonly credentialHash: string;
  lastSeen: number;
  /** Called once when the session ends (sign-out, idle expiry, rotation, eviction): cuts its event streams. */
  readonly enders: Set<() => void>;
}

export interface SessionView {
  sessionId: string;
  csrfToken: string;
  role: 'admin' | 'instance' | 'agent';
  instanceId: string | null;
  /** The operator signed in (null: the server secret or an instance key). */
  operator: string | null;
  /** An instance session's instance name (null when it has none). */
  name: string | null;
  /** Whether an instance session's instance is a sandbox (null for other sessions). */
  sandbox: boolean | null;
  /** An agent's instances, with their names. */
  instances: Array<{ instanceId: string; name: string | null }>;
}

export interface PanelSessionDeps {
  instances: { get(id: string): InstanceRecord | undefined };
  serverSecretHash(): string | null;
  idleMs: number;
  now(): number;
  /** Sessions per principal (default MAX_SESSIONS_PER_PRINCIPAL). */
  perPrincipal?: number;
  /** All sessions (default MAX_SESSIONS). */
  max?: number;
  /** Where sessions are kept beyond this process (every node of a gateway sees them). */
  store: SessionStore;
  /** An operator's password hash now (null: no such operator): a reset or removal ends its sessions. */
  operatorHash?(name: string): Promise<string | null>;
}



/** Whose session it is, for the per-principal bound. */
function principalKey(who: PanelRole): string {
  if (who.role === 'agent' || (who.role === 'admin' && who.operator !== undefined)) return `operator:${who.operator}`;
  return who.role === 'admin' ? 'admin' : `instance:${who.instanceId}`;
}

const operatorOf = (who: PanelRole): string | null => (who.role === 'instance' ? null : (who.operator ?? null));

const tokenKey = (token: string): string => hash('sha256', token, 'base64url');
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
  /** Sessions with something to end when they end (live event streams). */
  private readonly watched = new Set<Session>();
  private sweepTimer: NodeJS.Timeout | null = null;

  /** Each principal's sessions. */
  private readonly byPrincipal = new Map<string, Set<Session>>();
  /** Operators' password hashes as last read (each request with a cookie reads its operator's again). */
  private readonly operatorHashes = new Map<string, string | null>();
  private readonly perPrincipal: number;

  constructor(private readonly deps: PanelSessionDeps) {
    this.max = deps.max ?? MAX_SESSIONS;
    this.perPrincipal = deps.perPrincipal ?? MAX_SESSIONS_PER_PRINCIPAL;
  }

  /** Opens a session (stored before it is answered); returns the cookie token (once) and the session. */
  async open(who: PanelRole, credentialHash: string): Promise<{ token: string; view: SessionView }> {
    this.sweep();
    const principal = principalKey(who);
    const own = this.byPrincipal.get(principal);
    while (own && own.size >= this.perPrincipal) {
      let lru: Session | null = null;
      for (const s of own) if (!lru || s.lastSeen < lru.lastSeen) lru = s;
      if (!lru) break;
      this.end(lru);
    }
    // Other nodes' sessions of this principal count too.
    const stored = await this.deps.store.ofPrincipal(principal);
    if (stored.length >= this.perPrincipal) {
      const oldest = stored.sort((a, b) => a.lastSeen - b.lastSeen).slice(0, stored.length - this.perPrincipal + 1);
      for (const o of oldest) {
        const local = this.sessions.get(o.key);
        if (local) this.end(local);
      }
      await this.deps.store.remove(oldest.map((o) => o.key));
    }
    if (this.sessions.size >= this.max) throw new GatewayError('RATE_LIMITED', 'too many panel sessions are open; try again later', { retryAfter: 60 });
    const token = randomBytes(32).toString('base64url');
    const session: Session = {
      key: tokenKey(token),
      sessionId: randomBytes(9).toString('base64url'),
      csrf: randomBytes(24).toString('base64url'),
      who,
      credentialHash,
      lastSeen: this.deps.now(),
      enders: new Set(),
    };
    await this.deps.store.put({ key: session.key, sessionId: session.sessionId, csrf: session.csrf, principal, who: { ...who }, credentialHash, lastSeen: session.lastSeen });
    const operator = operatorOf(who);
    if (operator !== null) this.operatorHashes.set(operator, credentialHash);
    this.remember(session);
    return { token, view: this.view(session) };
  }

  private remember(session: Session): void {
    this.sessions.set(session.key, session);
    const principal = principalKey(session.who);
    let set = this.byPrincipal.get(principal);
    if (!set) {
      set = new Set();
      this.byPrincipal.set(principal, set);
    }
    set.add(session);
  }

  /**
   * Reads the session of a request's cookie from the store: this process may not know it (it was
   * opened on another node), know an old copy (its activity there) or one ended there (signed
   * out). Called before routing, so the synchronous lookups of the request find what is true.
   */
  async preload(ctx: Context): Promise<void> {
    const token = readCookie(ctx.get('cookie'), SESSION_COOKIE);
    if (!token) return;
    const key = tokenKey(token);
    const known = this.sessions.get(key);
    // Read every time: another node may have ended it (sign-out there) a moment ago.
    const stored = await this.deps.store.get(key);
    if (!stored) {
      if (known) this.end(known);
      return;
    }
    if (known) known.lastSeen = Math.max(known.lastSeen, stored.lastSeen);
    const who = stored.who as PanelRole;
    await this.refreshOperator(who);
    if (known) return;
    this.remember({ key, sessionId: stored.sessionId, csrf: stored.csrf, who, credentialHash: stored.credentialHash, lastSeen: stored.lastSeen, enders: new Set() });
  }

  /** Reads an operator's password hash again (another node may have reset or removed it). */
  private async refreshOperator(who: PanelRole): Promise<void> {
    const name = operatorOf(who);
    if (name === null || !this.deps.operatorHash) return;
    this.operatorHashes.set(name, await this.deps.operatorHash(name));
  }

  /** An operator was reset or removed here: its sessions end now (other nodes' at their next request). */
  operatorChanged(name: string, hash: string | null): void {
    this.operatorHashes.set(name, hash);
    for (const s of [...(this.byPrincipal.get(`operator:${name}`) ?? [])]) if (!this.alive(s)) this.end(s);
  }

  /** The live session a cookie token names, or null; `touch` (default) counts this as activity. */
  find(token: string | undefined, touch = true): Session | null {
    if (!token) return null;
    const key = tokenKey(token);
    const s = this.sessions.get(key);
    if (!s) return null;
    if (!this.alive(s)) {
      this.end(s);
      return null;
    }
    if (!touch) return s;
    s.lastSeen = this.deps.now();
    this.deps.store.touch(key, s.lastSeen);
    // Re-inserted: the map's order is least recently used first.
    this.sessions.delete(key);
    this.sessions.set(key, s);
    return s;
  }

  /** The session of a request's cookie, or null; a background request (BACKGROUND_HEADER) is not activity. */
  fromRequest(ctx: Context): Session | null {
    return this.find(readCookie(ctx.get('cookie'), SESSION_COOKIE), ctx.get(BACKGROUND_HEADER) === '');
  }

  /**
   * Runs `fn` once when `s` ends, however it ends (sign-out, idle expiry, rotation of its
   * credential, eviction); returns the canceller. While anything is attached, sessions are checked
   * every STREAM_SWEEP_MS, so an expired session's stream is cut even if no request comes.
   */
  onEnd(s: Session, fn: () => void): () => void {
    if (!this.sessions.has(s.key)) {
      fn();
      return () => undefined;
    }
    s.enders.add(fn);
    this.watched.add(s);
    if (!this.sweepTimer) {
      this.sweepTimer = setInterval(() => void this.sweepTimed(), STREAM_SWEEP_MS);
      this.sweepTimer.unref();
    }
    return () => {
      s.enders.delete(fn);
      if (s.enders.size === 0) this.unwatch(s);
    };
  }

  /** Ends every watched session that expired or whose credential changed (also run on a timer). */
  sweepWatched(): void {
    for (const s of [...this.watched]) if (!this.alive(s)) this.end(s);
  }

  /** The timer's sweep: operators' hashes are read again first (a reset elsewhere cuts their streams too). */
  private async sweepTimed(): Promise<void> {
    const names = new Set([...this.watched].map((s) => operatorOf(s.who)).filter((n): n is string => n !== null));
    for (const name of names) await this.refreshOperator({ role: 'agent', operator: name, instances: [] }).catch(() => undefined);
    this.sweepWatched();
  }

  /** Throws 401 unless a state-changing request carries the session's CSRF token. */
  checkCsrf(ctx: Context, s: Session): void {
    if (SAFE_METHODS.has(ctx.method)) return;
    if (!sameToken(ctx.get(CSRF_HEADER), s.csrf)) throw new GatewayError('UNAUTHORIZED', 'missing or invalid X-CSRF-Token for this panel session');
  }

  /** Signs out: ended here, and gone from the store before this resolves (every node then refuses it). */
  async close(s: Session): Promise<void> {
    this.end(s);
    await this.deps.store.remove([s.key]);
  }

  view(s: Session): SessionView {
    const who = s.who;
    const name = (id: string): string | null => this.deps.instances.get(id)?.name ?? null;
    return {
      sessionId: s.sessionId,
      csrfToken: s.csrf,
      role: who.role,
      instanceId: who.role === 'instance' ? who.instanceId : null,
      operator: operatorOf(who),
      name: who.role === 'instance' ? name(who.instanceId) : null,
      sandbox: who.role === 'instance' ? (this.deps.instances.get(who.instanceId)?.sandbox ?? false) : null,
      // Instances deleted since the agent was given them are left out.
      instances: who.role === 'agent' ? who.instances.filter((id) => this.deps.instances.get(id) !== undefined).map((id) => ({ instanceId: id, name: name(id) })) : [],
    };
  }

  /** SessionResolver: the principal of a request that carries a live session cookie. */
  principal(ctx: Context): Principal | null {
    const s = this.fromRequest(ctx);
    if (!s) return null;
    this.checkCsrf(ctx, s);
    const who = s.who;
    if (who.role === 'admin') return { kind: 'session', role: 'admin', sessionId: s.sessionId, ...(who.operator !== undefined ? { operator: who.operator } : {}) };
    if (who.role === 'agent') return { kind: 'session', role: 'agent', operator: who.operator, instances: who.instances, sessionId: s.sessionId };
    return { kind: 'session', role: 'instance', instanceId: who.instanceId, sessionId: s.sessionId };
  }

  size(): number {
    return this.sessions.size;
  }

  private alive(s: Session): boolean {
    return this.deps.now() - s.lastSeen < this.deps.idleMs && this.credentialStillValid(s);
  }

  private credentialStillValid(s: Session): boolean {
    const who = s.who;
    const operator = operatorOf(who);
    const current =
      operator !== null ? this.operatorHashes.get(operator) : who.role === 'admin' ? this.deps.serverSecretHash() : who.role === 'instance' ? this.deps.instances.get(who.instanceId)?.keyHash : undefined;
    return typeof current === 'string' && sameToken(current, s.credentialHash);
  }

  /** Forgets a session and runs what was attached to its end. */
  private end(s: Session): void {
    if (this.sessions.get(s.key) === s) this.sessions.delete(s.key);
    void this.deps.store.remove([s.key]).catch(() => undefined);
    const principal = principalKey(s.who);
    const set = this.byPrincipal.get(principal);
    if (set?.delete(s) && set.size === 0) this.byPrincipal.delete(principal);
    const fns = [...s.enders];
    s.enders.clear();
    this.unwatch(s);
    for (const fn of fns) {
      try {
        fn();
      } catch {
        // one failing closer does not keep the others from running
      }
    }
  }

  private unwatch(s: Session): void {
    this.watched.delete(s);
    if (this.watched.size === 0 && this.sweepTimer) {
      clearInterval(this.sweepTimer);
      this.sweepTimer = null;
    }
  }

  private sweep(): void {
    const now = this.deps.now();
    for (const s of [...this.sessions.values()]) if (now - s.lastSeen >= this.deps.idleMs) this.end(s);
  }
}
