import type { Context } from 'koa';
import type { Static, TSchema } from 'typebox';
import type { ErrorCode } from '../domain/errors.js';
import type { InstanceRecord } from '../schemas/instance.js';

/**
 * A route, defined once: method, path, who may call it, the schemas of its input and output, the
 * error codes it can answer, and its handler. The app builds the router from these definitions,
 * checks input against the schemas before the handler runs, and the OpenAPI document is generated
 * from the same definitions, so code, validation and documentation cannot drift apart.
 */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * Who may call a route:
 * - `instance`: the X-API-Key of the instance in `:id`, a panel session for that instance, an
 *   admin panel session, or the local CLI (control socket);
 * - `admin`: the server secret (X-API-Secret), an admin panel session, or the local CLI;
 * - `control`: only the local CLI, over the control socket;
 * - `admin-or-instance`: what `admin` allows, or the X-API-Key (or panel session) of the instance
 *   named in the query's `instanceId` (the handler keeps such a caller to its own instance);
 * - `public`: no credential.
 * An agent operator's panel session passes `instance` routes of its instances that
 * src/http/agent-policy.ts lists, and nothing else.
 */
export type RouteAuth = 'instance' | 'admin' | 'control' | 'admin-or-instance' | 'public';

/** Who is calling, once authenticated. */
export type Principal =
  | { kind: 'instance-key'; instanceId: string }
  | { kind: 'server-secret' }
  | { kind: 'control' }
  | { kind: 'session'; role: 'admin'; sessionId: string; /** An admin operator (absent: the server secret). */ operator?: string }
  | { kind: 'session'; role: 'instance'; instanceId: string; sessionId: string }
  | { kind: 'session'; role: 'agent'; operator: string; instances: readonly string[]; sessionId: string }
  | { kind: 'anonymous' };

export interface ResponseSpec {
  description: string;
  schema?: TSchema;
  /** Media type when not JSON (the media route, SSE). */
  contentType?: string;
  example?: unknown;
}

export interface RouteContext<B, Q> {
  readonly koa: Context;
  readonly params: Readonly<Record<string, string>>;
  readonly body: B;
  readonly query: Q;
  readonly principal: Principal;
  /** The instance an `instance` route is about (authenticated); unset on other routes. */
  readonly instance: InstanceRecord;
}

export interface RouteSpec<B extends TSchema | undefined, Q extends TSchema | undefined> {
  method: HttpMethod;
  /** Koa-router path: `/api/:id/send`. */
  path: string;
  auth: RouteAuth;
  operationId: string;
  summary: string;
  description?: string;
  tags: readonly string[];
  /** JSON body schema; absent = the route reads no JSON body. */
  body?: B;
  /**
   * Replaces the default check of the body against `body` (which still documents it): for
   * documents whose validator says more than a schema can (a flow names the node at fault).
   */
  parse?: (raw: unknown) => B extends TSchema ? Static<B> : undefined;
  /** Fields of a multipart/form-data body, for the document (the handler streams it itself). */
  multipart?: TSchema;
  /** The same fields may also come as a JSON body without the file (documented as both). */
  multipartOrJson?: boolean;
  /** Query string schema; values are converted from strings before the check. */
  query?: Q;
  /**
   * An `instance` route that also takes the key as `Authorization: Bearer KEY`, the header MCP
   * clients send (X-API-Key still works; the same key checks either way).
   */
  bearer?: boolean;
  /** Status of a successful answer (200). */
  status?: number;
  response: ResponseSpec;
  /** Error codes this route answers, besides the ones every route of its auth kind can. */
  errors?: readonly ErrorCode[];
  /** Example request body for the document. */
  example?: unknown;
  /** Example of the JSON form of a `multipartOrJson` route, when it differs from the multipart one. */
  jsonExample?: unknown;
  /** The body to answer with; `undefined` when the handler wrote `ctx.koa.body` itself (streams). */
  handle(ctx: RouteContext<B extends TSchema ? Static<B> : undefined, Q extends TSchema ? Static<Q> : Record<string, never>>): unknown;
}

/** A route with its handler's types erased, as the app and the document see it. */
export interface RouteDef {
  readonly method: HttpMethod;
  readonly path: string;
  readonly auth: RouteAuth;
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  readonly tags: readonly string[];
  readonly body?: TSchema;
  readonly parse?: (raw: unknown) => unknown;
  readonly multipart?: TSchema;
  readonly multipartOrJson?: boolean;
  readonly query?: TSchema;
  readonly bearer?: boolean;
  readonly status?: number;
  readonly response: ResponseSpec;
  readonly errors?: readonly ErrorCode[];
  readonly example?: unknown;
  readonly jsonExample?: unknown;
  handle(ctx: RouteContext<unknown, unknown>): unknown;
}

/** Defines a route; the handler's body and query are typed from the schemas. */
export function defineRoute<B extends TSchema | undefined = undefined, Q extends TSchema | undefined = undefined>(spec: RouteSpec<B, Q>): RouteDef {
  return spec as unknown as RouteDef;
}
