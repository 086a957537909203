import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { GatewayError } from '../domain/errors.js';
import { isInstanceId } from '../domain/ids.js';
import { verifySecret } from '../domain/secrets.js';
import type { ControlRequests } from '../http/control-requests.js';
import type { LeaseManager } from './leases.js';

/** Header of a request one node forwards to another: the cluster secret. */
export const FORWARDED_HEADER = 'x-gateway-forwarded';
/** The forwarding node trusted the request like its control socket (the local CLI). */
const TRUSTED_HEADER = 'x-gateway-trusted';

/** Headers that belong to one hop only. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', FORWARDED_HEADER, TRUSTED_HEADER]);

/** How long a request waits for an instance that has no owner right now (it is moving). */
const WAIT_FOR_OWNER_MS = 3_000;

/**
 * A forwarded request waits for the owner's answer as long as the owner keeps its lease (a send may
 * wait its turn in the pacing queue), checked this often, and at most OWNER_ANSWER_MAX_MS.
 */
const OWNER_CHECK_MS = 1_000;
const OWNER_ANSWER_MAX_MS = 120_000;
/** How long reaching the owner may take; failing to reach it means nothing happened there. */
const OWNER_CONNECT_MS = 5_000;

export interface ForwardingParts {
  nodeId: string;
  leases: LeaseManager;
  clusterSecret: string;
  /** The cluster secret's hash, to check forwarded requests against. */
  clusterSecretHash(): string;
  /** Whether an instance exists (an unknown id is answered here: 401 or 404 as usual). */
  exists(instanceId: string): boolean;
  /** Reads an instance this node does not know yet from the database (created elsewhere a moment ago). */
  refresh(instanceId: string): Promise<void>;
  control: ControlRequests;
  logger: Logger;
  /** Counted for /metrics. */
  counters: { forwarded: number; moving: number };
}

/** The instance a request is about, if any: `/api/{id}/...`, `/api/instances/{id}...`, `/control/instances/{id}/...`. */
export function instanceOf(path: string): string | null {
  const parts = path.split('/');
  let id: string | undefined;
  if (parts[1] === 'api' && parts[2] === 'instances') id = parts[3];
  else if (parts[1] === 'api') id = parts[2];
  else if (parts[1] === 'control' && parts[2] === 'instances') id = parts[3];
  return id !== undefined && isInstanceId(id) ? id : null;
}

/**
 * Any node answers any request: what is about one instance runs on the node that owns it (its
 * connection, its credits in flight, its deliveries live there), so a request for an instance
 * owned elsewhere is passed on over HTTP to the owner, with the cluster secret, and its answer
 * (a stream too: live events, `gateway pair`) comes back as it is. While an instance has no owner
 * (it moves) the request waits briefly, then answers 503 INSTANCE_MOVING with Retry-After; it is
 * never sent anywhere twice, so a send is never charged twice.
 */
export function forwardingMiddleware(parts: ForwardingParts): Middleware {
  return async (ctx, next) => {
    const forwarded = ctx.get(FORWARDED_HEADER);
    if (forwarded !== '') {
      if (!verifySecret(forwarded, parts.clusterSecretHash())) throw new GatewayError('UNAUTHORIZED', 'invalid cluster secret');
      if (ctx.get(TRUSTED_HEADER) === 'control') parts.control.trust(ctx.req);
      const client = ctx.get('x-forwarded-for').split(',')[0]?.trim();
      if (client) ctx.request.ip = client;
    }
    const id = instanceOf(ctx.path);
    if (id === null || parts.leases.owns(id)) return next();
    if (!parts.exists(id)) {
      await parts.refresh(id).catch(() => undefined);
      if (!parts.exists(id)) return next();
    }
    // Passed on once at most: a node that got it forwarded and is not the owner (any more) says so.
    if (forwarded !== '') return moving(parts);
    let owner = ownerOf(parts, id);
    const until = Date.now() + WAIT_FOR_OWNER_MS;
    while (owner === null && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 250));
      if (parts.leases.owns(id)) return next();
      await parts.leases.refresh(id).catch(() => null);
      owner = ownerOf(parts, id);
    }
    if (owner === null) return moving(parts);
    parts.counters.forwarded += 1;
    const target = owner;
    await proxy(ctx, owner, parts, () => ownerOf(parts, id) === target);
    return undefined;
  };
}

function moving(parts: ForwardingParts): never {
  parts.counters.moving += 1;
  throw new GatewayError('INSTANCE_MOVING', 'the instance is moving to another node; retry shortly (nothing was sent or charged)', { retryAfter: 2 });
}

/** The owner's URL, when another live node holds an unexpired lease. */
function ownerOf(parts: ForwardingParts, id: string): string | null {
  const lease = parts.leases.lease(id);
  if (!lease || lease.ownerNode === null || lease.expired || lease.ownerNode === parts.nodeId) return null;
  return parts.leases.urlOf(lease.ownerNode);
}

/**
 * Passes the request to the owner and its answer back. Not reaching the owner (refused, no
 * connection within OWNER_CONNECT_MS) is INSTANCE_MOVING: the owner never saw the request, so
 * nothing happened and the client may try again. Once the owner has the request, the answer is
 * waited for while it keeps its lease; if it loses the lease first (it stalled or died), what it
 * did is unknown: OWNER_NO_ANSWER, never INSTANCE_MOVING (a retry could send a message twice).
 */
function proxy(ctx: Parameters<Middleware>[0], ownerUrl: string, parts: ForwardingParts, stillOwner: () => boolean): Promise<void> {
  const target = new URL(ctx.originalUrl, ownerUrl);
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(ctx.req.headers as IncomingHttpHeaders)) if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
  headers[FORWARDED_HEADER] = parts.clusterSecret;
  headers['x-forwarded-for'] = ctx.ip;
  if (parts.control.has(ctx.req)) headers[TRUSTED_HEADER] = 'control';
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<void>((resolve, reject) => {
    let connected = false;
    let why: string | null = null;
    const started = Date.now();
    const stop = (reason: string): void => {
      why = reason;
      upstream.destroy(new Error(reason));
    };
    const connectTimer = setTimeout(() => {
      if (!connected) stop(`no connection to ${target.origin} within ${OWNER_CONNECT_MS} ms`);
    }, OWNER_CONNECT_MS);
    const watch = setInterval(() => {
      if (!stillOwner()) stop(`${target.origin} lost the instance's lease before answering`);
      else if (Date.now() - started > OWNER_ANSWER_MAX_MS) stop(`no answer from ${target.origin} within ${OWNER_ANSWER_MAX_MS} ms`);
    }, OWNER_CHECK_MS);
    const done = (): void => {
      clearTimeout(connectTimer);
      clearInterval(watch);
    };
    // A connection of its own: a reused keep-alive socket that the owner had closed would fail after
    // `connected`, making a request the owner never saw look like one it may have carried out.
    const upstream = send(target, { method: ctx.method, headers, agent: false }, (res) => {
      done();
      ctx.status = res.statusCode ?? 502;
      for (const [name, value] of Object.entries(res.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) ctx.set(name, value);
      ctx.body = res;
      // A client that leaves (an event stream closed) ends the upstream answer too.
      ctx.req.once('close', () => res.destroy());
      resolve();
    });
    upstream.on('socket', (socket) => {
      if (!socket.connecting) connected = true;
      else socket.once('connect', () => (connected = true));
    });
    upstream.on('error', (err) => {
      done();
      parts.logger.warn({ err: why ?? err.message, owner: target.origin, connected }, 'forwarding to the owner node failed');
      if (!connected) {
        reject(new GatewayError('INSTANCE_MOVING', 'the node that owns the instance could not be reached; retry shortly (nothing was sent or charged)', { retryAfter: 2, cause: err }));
      } else {
        reject(new GatewayError('OWNER_NO_ANSWER', 'the node that runs the instance took the request but did not answer (it stopped or lost the instance); it may have been carried out: check before trying again', { cause: err }));
      }
    });
    ctx.req.pipe(upstream);
  });
}
