import { readFileSync } from 'node:fs';
import { codesFor, componentSchemas, errorStatuses } from './schemas.js';
import { corePaths, flowPaths } from './paths.js';
import { ref } from './helpers.js';
import type { HeaderObject, OpenApiDocument, PathItemObject, ResponseObject } from './types.js';
import { HTTP_METHODS } from './types.js';

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad input: MISSING_FIELD, INVALID_FIELD, INVALID_PHONE or INVALID_JSON.',
  401: 'Missing or wrong key, or an unknown instance (the answer never reveals whether an id exists).',
  403: 'Plan: PREMIUM_REQUIRED (premium lapsed, no credits) or QUOTA_EXHAUSTED (no credits left).',
  404: 'NOT_FOUND: no such route, a sandbox route on a non-sandbox instance, or a disabled endpoint.',
  409: 'QR_NOT_AVAILABLE: no QR while the instance is not in qr_code_generated.',
  413: 'PAYLOAD_TOO_LARGE: JSON over 256 KiB or a file over media.maxBytes.',
  415: 'UNSUPPORTED_MEDIA_TYPE: wrong Content-Type for this route.',
  429: 'RATE_LIMITED: too many failed authentications from this address, or too many sends; see Retry-After.',
  500: 'INTERNAL: an unexpected failure; details are in the daemon log, never in the body.',
  503: 'CONNECTION_NOT_READY: the instance is not connected to WhatsApp.',
};

function packageVersion(): string {
  try {
    // src/ops/openapi and dist/ops/openapi are both three levels below the package root.
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

function errorResponses(): Record<string, ResponseObject> {
  const out: Record<string, ResponseObject> = {};
  for (const status of errorStatuses()) {
    const codes = codesFor(status);
    out[`Error${status}`] = {
      description: STATUS_TEXT[status] ?? codes.join(', '),
      ...(status === 429 ? { headers: { 'Retry-After': { $ref: '#/components/headers/Retry-After' } } } : {}),
      content: {
        'application/json': {
          schema: ref(`Error${status}`),
          example: { success: false, error: { code: codes[0], message: 'human-readable reason' } },
        },
      },
    };
  }
  return out;
}

const webhookHeaders: Record<string, HeaderObject> = {
  'webhook-id': { description: 'Event id, stable across retries of one event: use it to deduplicate.', required: true, schema: { type: 'string' } },
  'webhook-timestamp': { description: 'Unix seconds of this attempt.', required: true, schema: { type: 'string', pattern: '^[0-9]+$' } },
  'webhook-signature': {
    description: 'Present when the instance has a webhook secret: "v1,<base64 HMAC-SHA256 of {id}.{timestamp}.{body}>". A whsec_<base64> secret keys the HMAC with its decoded bytes, any other secret with its UTF-8 bytes.',
    schema: { type: 'string', pattern: '^v1,' },
  },
};

function webhookOperation(event: string, schema: string): PathItemObject {
  return {
    post: {
      operationId: `webhook_${event.replace('.', '_')}`,
      summary: `${event}: POSTed to the instance's webhook URL`,
      description: 'Standard Webhooks. Any 2xx acknowledges; anything else or a timeout is retried with backoff (webhooks.retryDelaysMs).',
      tags: ['webhooks'],
      parameters: Object.entries(webhookHeaders).map(([name, h]) => ({ name, in: 'header' as const, description: h.description, required: h.required ?? false, schema: h.schema })),
      requestBody: { required: true, content: { 'application/json': { schema: ref(schema) } } },
      responses: { '2XX': { description: 'Acknowledged.' } },
    },
  };
}

/**
 * The OpenAPI 3.1 document of every route the daemon can serve, including the optional parts
 * (metrics, docs, flows) marked with `x-gateway-part`.
 */
export function openApiDocument(): OpenApiDocument {
  return {
    openapi: '3.1.0',
    info: {
      title: 'WhatsApp gateway',
      version: packageVersion(),
      description:
        'Self-hosted WhatsApp messaging gateway. Instance routes take the instance API key in X-API-Key; provisioning takes the server secret in X-API-Secret. ' +
        'Every error has the body {"success": false, "error": {"code", "message"}}; match on the code.',
    },
    servers: [{ url: '/', description: 'The daemon itself (config host and port).' }],
    tags: [
      { name: 'instances', description: 'Provisioning and status.' },
      { name: 'messages', description: 'Sending.' },
      { name: 'webhooks', description: 'Event delivery to your server.' },
      { name: 'sandbox', description: 'Simulated connections (sandbox instances only; 404 for others).' },
      { name: 'flows', description: 'Chatbot flows and human handover.' },
      { name: 'operations', description: 'Health, metrics and this document (no auth).' },
    ],
    paths: { ...corePaths(), ...flowPaths() },
    webhooks: {
      'message.received': webhookOperation('message.received', 'MessageReceivedEvent'),
      'instance.status': webhookOperation('instance.status', 'InstanceStatusEvent'),
      'qr.updated': webhookOperation('qr.updated', 'QrUpdatedEvent'),
      'conversation.handover': webhookOperation('conversation.handover', 'HandoverEvent'),
    },
    components: {
      schemas: componentSchemas(),
      responses: errorResponses(),
      parameters: {
        InstanceId: { name: 'id', in: 'path', required: true, description: 'The instanceId.', schema: ref('InstanceId') },
      },
      headers: {
        'Retry-After': { description: 'Seconds to wait before trying again.', required: true, schema: { type: 'string', pattern: '^[0-9]+$' } },
      },
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'The instance API key, shown once at creation or `gateway key rotate`.' },
        ServerSecret: { type: 'apiKey', in: 'header', name: 'X-API-Secret', description: 'The server secret, shown once by `gateway init`; provisioning only.' },
      },
    },
  };
}

/** One documented route: the OpenAPI path ("/api/{id}/send") and upper-case method. */
export interface DocumentedRoute {
  path: string;
  method: string;
  part: string | null;
}

export function documentedRoutes(doc: OpenApiDocument): DocumentedRoute[] {
  const out: DocumentedRoute[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (operation) out.push({ path, method: method.toUpperCase(), part: operation['x-gateway-part'] ?? null });
    }
  }
  return out;
}

/** "/api/:id/send" (koa-router) -> "/api/{id}/send" (OpenAPI). */
export function toOpenApiPath(routerPath: string): string {
  return routerPath.replace(/:(\w+)/g, '{$1}');
}

/**
 * The document limited to what this daemon serves: operations of an optional part are dropped
 * unless `registered` (upper-case method + OpenAPI path) holds them.
 */
export function servedDocument(doc: OpenApiDocument, registered: ReadonlySet<string>): OpenApiDocument {
  const paths: Record<string, PathItemObject> = {};
  for (const [path, item] of Object.entries(doc.paths)) {
    const kept: PathItemObject = {};
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (!operation) continue;
      if (operation['x-gateway-part'] !== undefined && !registered.has(`${method.toUpperCase()} ${path}`)) continue;
      kept[method] = operation;
    }
    if (Object.keys(kept).length > 0) paths[path] = kept;
  }
  return { ...doc, paths };
}
