import { readFileSync } from 'node:fs';
import type { TSchema } from 'typebox';
import { API_ERROR_CODES, ERROR_TABLE, type ErrorCode } from '../domain/errors.js';
import type { RouteDef } from '../http/route.js';
import { ErrorBody } from '../schemas/common.js';
import { EVENT_TYPES, eventEnvelope } from '../schemas/events.js';
import { RECORDED_EXAMPLES } from './recorded-examples.js';

/** A JSON value of the document (schemas are plain JSON Schema 2020-12, the dialect of OpenAPI 3.1). */
type Json = Record<string, unknown>;

function packageVersion(): string {
  try {
    // src/openapi and dist/openapi are both two levels below the package root.
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** A schema as plain JSON (TypeBox adds nothing enumerable, but copy so the document is inert). */
function plain(schema: TSchema): Json {
  return JSON.parse(JSON.stringify(schema)) as Json;
}

/** "/api/:id/send" (koa-router) -> "/api/{id}/send" (OpenAPI). */
export function toOpenApiPath(routerPath: string): string {
  return routerPath.replace(/:(\w+)/g, '{$1}');
}

/** Codes every route of an auth kind can answer, besides its own. */
function impliedErrors(def: RouteDef): ErrorCode[] {
  const out: ErrorCode[] = ['INTERNAL'];
  if (def.auth === 'instance' || def.auth === 'admin' || def.auth === 'admin-or-instance') out.push('UNAUTHORIZED', 'RATE_LIMITED');
  if (def.body) out.push('INVALID_JSON', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE');
  // A route that takes no body refuses one with fields (see takesNoBody in http/app.ts).
  else if (!def.multipart && def.method !== 'GET') out.push('INVALID_FIELD', 'INVALID_JSON', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE');
  // A multipart route that also takes JSON (send-media, status, the sandbox's inbound) reads that JSON too.
  if (def.multipartOrJson) out.push('INVALID_JSON');
  if (def.query) out.push('INVALID_FIELD');
  // Several hosts: a request about an instance that is moving to another node.
  if (/:id\b/.test(def.path)) out.push('INSTANCE_MOVING', 'OWNER_NO_ANSWER');
  return out;
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad input.',
  401: 'Missing or wrong key, or an unknown instance (the answer never reveals whether an id exists).',
  403: 'The plan does not allow it.',
  404: 'Not found.',
  409: 'Not possible in the current state.',
  413: 'Body too large.',
  415: 'Wrong Content-Type.',
  429: 'Too many requests; see Retry-After.',
  500: 'An unexpected failure (INTERNAL: details are in the daemon log, never in the body); SENT_NOT_RECORDED: the message was sent (see messageId), do not send it again.',
  503: 'Not available now.',
};

function errorResponses(codes: readonly ErrorCode[]): Json {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    if (!(API_ERROR_CODES as readonly string[]).includes(code)) continue;
    const status = ERROR_TABLE[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Json = {};
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    // A 5xx not written for clients is answered as INTERNAL; the ones written for them keep their code.
    const shown = status >= 500 && status !== 503 ? ['INTERNAL', ...list.filter((c) => c !== 'INTERNAL' && ERROR_TABLE[c].expose)] : list;
    out[String(status)] = {
      description: `${STATUS_TEXT[status] ?? 'Error.'} Codes: ${shown.join(', ')}.`,
      ...(status === 429 ? { headers: { 'Retry-After': { $ref: '#/components/headers/Retry-After' } } } : {}),
      content: {
        'application/json': {
          // The Error schema with `code` narrowed to this status' codes (one closed object, so
          // validators and linters agree on what an example may hold).
          schema: {
            type: 'object',
            additionalProperties: false,
            required: ['success', 'error'],
            description: 'Every error answer.',
            properties: {
              success: { const: false, type: 'boolean' },
              error: {
                type: 'object',
                additionalProperties: false,
                required: ['code', 'message'],
                properties: { code: { type: 'string', enum: shown }, message: { type: 'string' }, node: { type: 'string', description: 'The flow node at fault (flow validation errors).' }, messageId: { type: 'string', description: 'The message that was sent (SENT_NOT_RECORDED).' } },
              },
            },
          },
          example: { success: false, error: { code: shown[0], message: 'human-readable reason' } },
        },
      },
    };
  }
  return out;
}

function operation(def: RouteDef): Json {
  const params: Json[] = [];
  for (const name of [...def.path.matchAll(/:(\w+)/g)].map((m) => m[1]!)) {
    params.push(
      name === 'id'
        ? { $ref: '#/components/parameters/InstanceId' }
        : { name, in: 'path', required: true, description: `The ${name}.`, schema: { type: 'string', maxLength: 200 } },
    );
  }
  if (def.query) {
    const q = plain(def.query) as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, schema] of Object.entries(q.properties ?? {})) {
      params.push({ name, in: 'query', required: q.required?.includes(name) ?? false, ...(schema.description ? { description: schema.description } : {}), schema });
    }
  }
  const op: Json = {
    operationId: def.operationId,
    summary: def.summary,
    ...(def.description ? { description: def.description } : {}),
    tags: [...def.tags],
    security: def.auth === 'instance' ? [{ ApiKey: [] }, ...(def.bearer ? [{ BearerKey: [] }] : [])] : def.auth === 'admin' ? [{ ServerSecret: [] }] : def.auth === 'admin-or-instance' ? [{ ServerSecret: [] }, { ApiKey: [] }] : [],
  };
  if (params.length > 0) op.parameters = params;
  if (def.body) {
    op.requestBody = { required: true, content: { 'application/json': { schema: plain(def.body), ...(def.example !== undefined ? { example: def.example } : {}) } } };
  } else if (def.multipart) {
    const fields = plain(def.multipart) as { properties?: Json; required?: string[] };
    op.requestBody = {
      required: true,
      content: {
        'multipart/form-data': {
          schema: {
            type: 'object',
            properties: { file: { type: 'string', contentMediaType: 'application/octet-stream', description: 'The file; at most media.maxBytes (16 MiB by default).' }, ...fields.properties },
            required: ['file', ...(fields.required ?? [])],
          },
          ...(def.example !== undefined ? { example: { ...(def.example as Json), file: '(the bytes of the file)' } } : {}),
        },
        ...(def.multipartOrJson ? { 'application/json': { schema: plain(def.multipart), ...((def.jsonExample ?? def.example) !== undefined ? { example: def.jsonExample ?? def.example } : {}) } } : {}),
      },
    };
  }
  const ok: Json = { description: def.response.description };
  if (def.response.schema) {
    // A hand-written example wins; else a real answer recorded by scripts/record-openapi-examples.ts.
    const example = def.response.example ?? RECORDED_EXAMPLES[`${def.method} ${toOpenApiPath(def.path)}`];
    ok.content = {
      [def.response.contentType ?? 'application/json']: { schema: plain(def.response.schema), ...(example !== undefined ? { example } : {}) },
    };
  }
  op.responses = { [String(def.status ?? 200)]: ok, ...errorResponses([...impliedErrors(def), ...(def.errors ?? [])]) };
  return op;
}

const WEBHOOK_HEADERS: Json[] = [
  { name: 'webhook-id', in: 'header', required: true, description: 'Event id, stable across retries of one event: use it to deduplicate.', schema: { type: 'string' } },
  { name: 'webhook-timestamp', in: 'header', required: true, description: 'Unix seconds of this attempt.', schema: { type: 'string', pattern: '^[0-9]+$' } },
  {
    name: 'webhook-signature',
    in: 'header',
    required: false,
    description: 'Present when the instance has a webhook secret: "v1,<base64 HMAC-SHA256 of {id}.{timestamp}.{body}>". A whsec_<base64> secret keys the HMAC with its decoded bytes, any other secret with its UTF-8 bytes.',
    schema: { type: 'string', pattern: '^v1,' },
  },
];

function webhooks(): Json {
  const out: Json = {};
  for (const type of EVENT_TYPES) {
    out[type] = {
      post: {
        operationId: `event_${type.replace('.', '_')}`,
        summary: `${type}, POSTed to the instance's webhook URL (and streamed by GET /api/{id}/events)`,
        description: 'Standard Webhooks. Any 2xx acknowledges; anything else or a timeout is retried with backoff (webhooks.retryDelaysMs).',
        tags: ['events'],
        // The gateway calls the receiver: no credential of ours is involved (deliveries are signed).
        security: [],
        parameters: WEBHOOK_HEADERS,
        requestBody: { required: true, content: { 'application/json': { schema: plain(eventEnvelope(type)) } } },
        responses: { '200': { description: 'Acknowledged (any 2xx).' }, '400': { description: 'Refused (retried later).' } },
      },
    };
  }
  return out;
}

const TAGS: Array<[string, string]> = [
  ['provisioning', 'Instances for a reseller\'s server (server secret).'],
  ['instance', 'Status, pairing and lifecycle of one instance (instance key).'],
  ['messages', 'Sending, and reading messages and their status.'],
  ['chats', 'Conversation history, contacts and groups.'],
  ['groups', 'Making and running groups: create, settings, participants, invite links, join and leave.'],
  ['calls', 'Incoming calls.'],
  ['agents', 'AI agents: the Model Context Protocol (MCP) server of an instance.'],
  ['webhooks', 'Where events go, and their deliveries.'],
  ['events', 'Events: webhook bodies and live events.'],
  ['flows', 'Chatbot flows and human handover.'],
  ['sandbox', 'Simulated connections (sandbox instances only; 404 for others).'],
  ['panel', 'Sign-in of the web panel.'],
  ['operations', 'Health, metrics and this document (no auth).'],
];

/** The OpenAPI 3.1 document of the routes this daemon serves (control-socket routes left out). */
export function openApiDocument(routes: readonly RouteDef[]): Json {
  const paths: Record<string, Json> = {};
  for (const def of routes) {
    if (def.auth === 'control') continue;
    const path = toOpenApiPath(def.path);
    paths[path] = { ...(paths[path] ?? {}), [def.method.toLowerCase()]: operation(def) };
  }
  const used = new Set(routes.flatMap((r) => r.tags));
  return {
    openapi: '3.1.0',
    info: {
      title: 'WhatsApp gateway',
      version: packageVersion(),
      description:
        'Self-hosted WhatsApp messaging gateway. Instance routes take the instance API key in X-API-Key; provisioning takes the server secret in X-API-Secret. ' +
        'Every error has the body {"success": false, "error": {"code", "message"}}; match on the code. Unknown body fields are refused (400 INVALID_FIELD).',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    // Relative until served: `servedTo` names the address the reader asked at.
    servers: [{ url: '/', description: 'This daemon.' }],
    tags: TAGS.filter(([name]) => used.has(name) || name === 'events').map(([name, description]) => ({ name, description })),
    paths,
    webhooks: webhooks(),
    components: {
      schemas: { Error: plain(ErrorBody) },
      parameters: {
        InstanceId: { name: 'id', in: 'path', required: true, description: 'The instanceId.', schema: { type: 'string', pattern: '^inst_[A-Za-z0-9_-]{6,40}$' } },
      },
      headers: {
        'Retry-After': { description: 'Seconds to wait before trying again.', required: true, schema: { type: 'string', pattern: '^[0-9]+$' } },
      },
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'The instance API key, shown once at creation or rotation.' },
        ServerSecret: { type: 'apiKey', in: 'header', name: 'X-API-Secret', description: 'The server secret, shown once by `gateway init`; provisioning only.' },
        BearerKey: { type: 'http', scheme: 'bearer', description: 'The instance API key as `Authorization: Bearer KEY`, as MCP clients send it; only where a route lists it (/api/{id}/mcp).' },
      },
    },
  };
}

/** A Host header worth repeating: a name or an address, an optional port, nothing else. */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/**
 * The document as served to one reader: `servers` names the address it was fetched from (the
 * request's protocol and Host), so "try it" and generated clients reach this daemon whatever host
 * and port it listens on. A Host that is not a plain host[:port] keeps the relative `/`, which
 * OpenAPI resolves against where the document was fetched.
 */
export function servedTo(doc: Json, protocol: string, host: string | undefined): Json {
  if (!host || !HOST.test(host) || (protocol !== 'http' && protocol !== 'https')) return doc;
  return { ...doc, servers: [{ url: `${protocol}://${host}`, description: 'This daemon, as this document was fetched.' }] };
}
