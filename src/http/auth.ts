import { timingSafeEqual } from 'node:crypto';
import type { Socket } from 'node:net';
import type { Context } from 'koa';
import { GatewayError } from '../domain/errors.js';
import type { InstanceRecord } from '../schemas/instance.js';
import { isInstanceId } from '../domain/ids.js';
import { verifySecret } from '../domain/secrets.js';
import type { AuthFailureLimiter } from './auth-limiter.js';
import type { ControlRequests } from './control-requests.js';
import type { Principal, RouteAuth } from './route.js';
import { AGENT_OPERATIONS } from './agent-policy.js';


/** Panel sessions plug in here: a signed-in browser is a principal too. */
export interface SessionResolver {
  /** The session of this request, if it carries a valid one; throws 401/403 for a bad CSRF token. */
  principal(ctx: Context): Principal | null;
}

/**
 * The API key last verified on each connection, with the stored hash it matched. A keep-alive
 * client sends the same key with every request: the same key on the same connection, against the
 * same stored hash, is accepted without hashing it again. Measured on the bench's send run (50
 * keep-alive connections, 4 interleaved runs each): the daemon's CPU per send 111 -> 99.5 µs
 * (median), far more than the digest alone costs in a micro-benchmark (1.3 µs): the check makes
 * a Hash object and two buffers per request. Nothing outlives the connection, only a key that
 * was valid on it is kept, the keys are compared in constant time (a reverse proxy may carry
 * several clients on one connection), and a different key, a rotated one or an unknown instance
 * takes the full check.
 */
const verifiedOn = new WeakMap<Socket, { key: string; keyHash: string }>();

/** Whether a presented key is the one verified before, in constant time (a proxy may share a connection). */
function sameKey(known: string, presented: string | undefined): boolean {
  if (presented === undefined || presented.length !== known.length) return false;
  const a = Buffer.from(known);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}

export interface AuthDeps {
  instances: { get(id: string): InstanceRecord | undefined };
  /** The control socket's requests (trusted like the server secret); set by createApp. */
  control?: ControlRequests;
  /** Read per request: `gateway init --force` replaces it in a running daemon. */
  serverSecretHash(): string | null;
  /** The secret a rotation replaced, accepted until the new one was shown (see afterDelivery). */
  retiringSecretHash?(): string | null;
  /** A rotated-out key whose retirement is being stored: refuse it already. */
  keyRetired?(instanceId: string, keyHash: string): boolean;
  /**
   * A rotated credential was used: the one it replaced stops now. The request waits for it (once
   * per rotation), so the holder never goes on while the store could still roll back to the old.
   */
  credentialUsed?(who: { kind: 'server-secret' } | { kind: 'instance-key'; instanceId: string; keyHash: string }): Promise<void>;
  limiter: AuthFailureLimiter;
  sessions?: SessionResolver;
}

export interface Authenticated {
  principal: Principal;
  instance?: InstanceRecord;
  /** The retirement of a rotated-out credential this request triggered (await before answering). */
  retiring?: Promise<void>;
}

function header(ctx: Context, name: string): string | undefined {
  const v = ctx.get(name);
  return v === '' ? undefined : v;
}

/** The key of `Authorization: Bearer KEY` (scheme in any case, as RFC 9110 says). */
function bearerKey(ctx: Context): string | undefined {
  const m = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(ctx.get('authorization'));
  return m?.[1];
}

function unauthorized(ctx: Context, deps: AuthDeps, message: string): never {
  deps.limiter.fail(ctx.ip);
  throw new GatewayError('UNAUTHORIZED', message);
}

/** What of the route decides who may call it, besides its `auth` kind. */
export interface RouteKeys {
  operationId?: string;
  bearer?: boolean;
}

/**
 * Who may call a route of kind `auth`, for this request. A missing key, a wrong key and an unknown
 * or malformed id all get the same 401, so the answer never reveals whether an instance exists;
 * only trusted callers (the local CLI, an admin session) learn that an id is unknown (404).
 * `route.bearer`: the instance key may also come as `Authorization: Bearer KEY` (X-API-Key wins);
 * `route.operationId` is what an agent's session is checked against (agent-policy.ts).
 */
export function authenticate(ctx: Context, auth: RouteAuth, deps: AuthDeps, route: RouteKeys = {}): Authenticated {
  if (auth === 'public') return { principal: { kind: 'anonymous' } };
  const control = deps.control?.has(ctx.req) ?? false;
  if (auth === 'control') {
    if (!control) throw new GatewayError('NOT_FOUND', `no route for ${ctx.method} ${ctx.path.slice(0, 100)}`);
    return { principal: { kind: 'control' } };
  }
  const session = control ? null : (deps.sessions?.principal(ctx) ?? null);
  if (auth === 'admin-or-instance') {
    // An instance's panel session (or an agent's), or an X-API-Key without X-API-Secret, is kept to
    // the instance of ?instanceId=; everyone else is checked as for `admin`.
    const scoped =
      !control && ((session?.kind === 'session' && session.role !== 'admin') || (session === null && header(ctx, 'x-api-secret') === undefined && header(ctx, 'x-api-key') !== undefined));
    if (!scoped) return authenticate(ctx, 'admin', deps, route);
    return instanceAuth(ctx, deps, control, session, typeof ctx.query.instanceId === 'string' ? ctx.query.instanceId : '', route);
  }
  if (auth === 'admin') {
    if (control) return { principal: { kind: 'control' } };
    if (session?.kind === 'session' && session.role === 'admin') return { principal: session };
    const secret = header(ctx, 'x-api-secret');
    const retiring = deps.retiringSecretHash?.() ?? null;
    if (verifySecret(secret, deps.serverSecretHash())) {
      const done = retiring !== null ? deps.credentialUsed?.({ kind: 'server-secret' }) : undefined;
      return { principal: { kind: 'server-secret' }, ...(done ? { retiring: done } : {}) };
    }
    if (retiring !== null && verifySecret(secret, retiring)) return { principal: { kind: 'server-secret' } };
    return unauthorized(ctx, deps, 'missing or invalid X-API-Secret');
  }
  // auth === 'instance'
  return instanceAuth(ctx, deps, control, session, String((ctx.params as Record<string, string> | undefined)?.id ?? ''), route);
}

/** An instance's key, or a panel session allowed on it (an agent only on the routes of agent-policy.ts). */
function instanceAuth(ctx: Context, deps: AuthDeps, control: boolean, session: Principal | null, id: string, route: RouteKeys): Authenticated {
  const record = isInstanceId(id) ? deps.instances.get(id) : undefined;
  if (control || (session?.kind === 'session' && session.role === 'admin')) {
    if (!record) throw new GatewayError('NOT_FOUND', `no instance with id ${JSON.stringify(id.slice(0, 60))}`);
    return { principal: control ? { kind: 'control' } : session!, instance: record };
  }
  if (session?.kind === 'session' && session.role === 'instance') {
    if (!record || session.instanceId !== record.id) return unauthorized(ctx, deps, 'this panel session is for another instance');
    return { principal: session, instance: record };
  }
  if (session?.kind === 'session' && session.role === 'agent') {
    if (!record || !session.instances.includes(record.id) || !AGENT_OPERATIONS.has(route.operationId ?? '')) return unauthorized(ctx, deps, 'an agent may use the inbox, chats and status of its own instances only');
    return { principal: session, instance: record };
  }
  const key = header(ctx, 'x-api-key') ?? (route.bearer ? bearerKey(ctx) : undefined);
  const socket = ctx.req.socket;
  const known = verifiedOn.get(socket);
  if (record && known !== undefined && known.keyHash === record.keyHash && sameKey(known.key, key)) {
    return { principal: { kind: 'instance-key', instanceId: record.id }, instance: record };
  }
  if (record && verifySecret(key, record.keyHash)) {
    // The first use of a rotated key retires the one it replaced (if its answer never arrived).
    const done = record.retiringKeyHash !== undefined ? deps.credentialUsed?.({ kind: 'instance-key', instanceId: record.id, keyHash: record.keyHash }) : undefined;
    verifiedOn.set(socket, { key: key!, keyHash: record.keyHash });
    return { principal: { kind: 'instance-key', instanceId: record.id }, instance: record, ...(done ? { retiring: done } : {}) };
  }
  // A rotation not yet known to have reached the holder: the old key still works (not cached, so
  // it stops at the first request after the rotation is confirmed).
  if (record?.retiringKeyHash !== undefined && !deps.keyRetired?.(record.id, record.retiringKeyHash) && verifySecret(key, record.retiringKeyHash)) {
    return { principal: { kind: 'instance-key', instanceId: record.id }, instance: record };
  }
  return unauthorized(ctx, deps, route.bearer ? 'missing or invalid API key for this instance (X-API-Key or Authorization: Bearer)' : 'missing or invalid X-API-Key for this instance');
}
