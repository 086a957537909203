import { ref } from './helpers.js';
import type { OperationObject, PathItemObject, ResponseObject, SchemaObject } from './types.js';
import { EXAMPLE_FLOW } from '../../flows/example.js';

const json = (schema: SchemaObject, example?: unknown) => ({ 'application/json': { schema, ...(example !== undefined ? { example } : {}) } });
const body = (name: string, example?: unknown) => ({ required: true, content: json(ref(name), example) });
const ok = (description: string, name: string, example?: unknown): ResponseObject => ({ description, content: json(ref(name), example) });
const errors = (...statuses: number[]) => Object.fromEntries([...statuses, 500].map((s) => [String(s), { $ref: `#/components/responses/Error${s}` }]));

const apiKey = [{ ApiKey: [] }];
const serverSecret = [{ ServerSecret: [] }];
const noAuth: Record<string, string[]>[] = [];
const instanceParam = [{ $ref: '#/components/parameters/InstanceId' }];

const INSTANCE = 'inst_Xk3v9QpLm2Tz';
const sendExample = { success: true, instanceId: INSTANCE, messageId: '3EB0C767D26A1B2C3D4E', quotaRemaining: '41' };

function op(operation: OperationObject): OperationObject {
  return operation;
}

/** Instance routes share the `{id}` path parameter and X-API-Key. */
function instanceOp(operation: Omit<OperationObject, 'security' | 'parameters'>): OperationObject {
  return { ...operation, security: apiKey, parameters: instanceParam };
}

/** The core routes (src/daemon/app.ts and src/daemon/routes/*) and the ops plugins' routes. */
export function corePaths(): Record<string, PathItemObject> {
  return {
    '/healthz': {
      get: op({
        operationId: 'health',
        summary: 'Liveness: 200 while the daemon serves',
        tags: ['operations'],
        security: noAuth,
        responses: { '200': ok('The daemon serves.', 'Health', { ok: true }), ...errors() },
      }),
    },
    '/metrics': {
      get: op({
        operationId: 'metrics',
        summary: 'Prometheus metrics',
        description:
          'Prometheus text format. Guarded by config `metrics.mode`: "off" answers 404; "local" (default) answers only loopback clients ' +
          '(127.0.0.0/8, ::1) and 404 to anyone else; "public" answers everyone.',
        tags: ['operations'],
        security: noAuth,
        'x-gateway-part': 'metrics',
        responses: {
          '200': { description: 'Metrics.', content: { 'text/plain; version=0.0.4; charset=utf-8': { schema: { type: 'string' } } } },
          ...errors(404),
        },
      }),
    },
    '/openapi.json': {
      get: op({
        operationId: 'openapi',
        summary: 'This OpenAPI 3.1 document',
        tags: ['operations'],
        security: noAuth,
        'x-gateway-part': 'docs',
        responses: { '200': { description: 'The document.', content: json({ type: 'object' }) }, ...errors() },
      }),
    },
    '/api/instances/create': {
      post: op({
        operationId: 'createInstance',
        summary: 'Provision an instance (server secret)',
        description: 'The instance API key is refused here (401). The first instance of an owner gets the premium trial, exactly once.',
        tags: ['instances'],
        security: serverSecret,
        requestBody: { required: false, content: json(ref('CreateInstanceRequest'), { name: 'shop', owner: 'acme', webhookUrl: 'https://example.com/hook' }) },
        responses: {
          '201': ok('Created. `apiKey` is shown only here.', 'CreateInstanceResponse', {
            success: true,
            instanceId: INSTANCE,
            apiKey: 'gk_9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d',
            status: 'initializing',
            premium: true,
            premiumUntil: '2030-01-31T12:00:00.000Z',
            quotaRemaining: 'unlimited',
          }),
          ...errors(400, 401, 413, 415, 429),
        },
      }),
    },
    '/api/{id}/send': {
      post: instanceOp({
        operationId: 'send',
        summary: 'Send a text message',
        description: 'Checks run in this order: auth (401), input (400/413/415), plan (403), connection (503), rate limits (429). A credit is spent only for a message actually sent.',
        tags: ['messages'],
        requestBody: body('SendRequest', { phone: '+15551234567', message: 'Your order has shipped.' }),
        responses: { '200': ok('Sent.', 'SendResponse', sendExample), ...errors(400, 401, 403, 413, 415, 429, 503) },
      }),
    },
    '/api/{id}/send-media': {
      post: instanceOp({
        operationId: 'sendMedia',
        summary: 'Send an image, video, audio or document',
        description: 'multipart/form-data, streamed to disk. Costs credits like a text send.',
        tags: ['messages'],
        requestBody: {
          required: true,
          content: { 'multipart/form-data': { schema: ref('SendMediaRequest'), encoding: { file: { contentType: 'application/octet-stream' } } } },
        },
        responses: { '200': ok('Sent.', 'SendMediaResponse', { ...sendExample, mediaType: 'image' }), ...errors(400, 401, 403, 413, 415, 429, 503) },
      }),
    },
    '/api/{id}/status': {
      get: instanceOp({
        operationId: 'status',
        summary: 'Connection and plan status',
        tags: ['instances'],
        responses: {
          '200': ok('Status.', 'StatusResponse', { success: true, instanceId: INSTANCE, status: 'connected', premium: false, premiumUntil: null, quotaRemaining: '41', reason: null }),
          ...errors(401, 429),
        },
      }),
    },
    '/api/{id}/qr-code': {
      get: instanceOp({
        operationId: 'qrCode',
        summary: 'The pairing QR while status is qr_code_generated',
        tags: ['instances'],
        responses: { '200': ok('The current QR.', 'QrResponse'), ...errors(401, 409, 429) },
      }),
    },
    '/api/{id}/webhook': {
      put: instanceOp({
        operationId: 'setWebhook',
        summary: "Set the instance's webhook",
        tags: ['webhooks'],
        requestBody: body('WebhookRequest', { url: 'https://example.com/hook', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }),
        responses: {
          '200': ok('Saved.', 'WebhookResponse', { success: true, instanceId: INSTANCE, webhook: { url: 'https://example.com/hook', signed: true, events: 'all' } }),
          ...errors(400, 401, 413, 415, 429),
        },
      }),
    },
    '/api/{id}/sandbox/scan': {
      post: instanceOp({
        operationId: 'sandboxScan',
        summary: 'Sandbox: the simulated phone scans the QR (status becomes connected)',
        tags: ['sandbox'],
        responses: { '200': ok('Connected.', 'SandboxStatusResponse'), ...errors(401, 404, 429) },
      }),
    },
    '/api/{id}/sandbox/disconnect': {
      post: instanceOp({
        operationId: 'sandboxDisconnect',
        summary: 'Sandbox: drop the simulated connection (status becomes disconnected)',
        tags: ['sandbox'],
        responses: { '200': ok('Disconnected.', 'SandboxStatusResponse'), ...errors(401, 404, 429) },
      }),
    },
    '/api/{id}/sandbox/inbound': {
      post: instanceOp({
        operationId: 'sandboxInbound',
        summary: 'Sandbox: receive a message, handled exactly like a real one (webhook, flows)',
        tags: ['sandbox'],
        requestBody: body('SandboxInboundRequest', { from: '+15557654321', message: 'hello', name: 'Ana' }),
        responses: { '200': ok('Received and stored for delivery.', 'SandboxInboundResponse'), ...errors(400, 401, 404, 413, 415, 429) },
      }),
    },
    '/api/{id}/sandbox/sent': {
      get: instanceOp({
        operationId: 'sandboxSent',
        summary: 'Sandbox: what the instance has sent, oldest first',
        tags: ['sandbox'],
        responses: { '200': ok('Sent messages.', 'SandboxSentResponse'), ...errors(401, 404, 429) },
      }),
    },
  };
}


/** The chatbot flow routes (src/flows/routes.ts), served when the flows part is loaded. */
export function flowPaths(): Record<string, PathItemObject> {
  const part = { 'x-gateway-part': 'flows' };
  const stored = { success: true, instanceId: INSTANCE, flow: EXAMPLE_FLOW, revision: 'r_5f2c1a', updatedAt: '2030-01-01T12:00:00.000Z' };
  return {
    '/api/{id}/flow': {
      put: instanceOp({
        ...part,
        operationId: 'setFlow',
        summary: "Set the instance's chatbot flow",
        description: 'Replaces the flow; conversations in progress restart from `start`. A flow that fails validation is 400 INVALID_FIELD with the node named in the message.',
        tags: ['flows'],
        requestBody: body('Flow', EXAMPLE_FLOW),
        responses: { '200': ok('Saved.', 'FlowResponse', stored), ...errors(400, 401, 413, 415, 429) },
      }),
      get: instanceOp({
        ...part,
        operationId: 'getFlow',
        summary: "The instance's chatbot flow",
        tags: ['flows'],
        responses: { '200': ok('The flow.', 'FlowResponse', stored), ...errors(401, 404, 429) },
      }),
      delete: instanceOp({
        ...part,
        operationId: 'clearFlow',
        summary: "Remove the instance's chatbot flow",
        tags: ['flows'],
        responses: { '200': ok('Removed (or there was none).', 'FlowClearedResponse', { success: true, instanceId: INSTANCE, deleted: true }), ...errors(401, 429) },
      }),
    },
    '/api/{id}/handover/release': {
      post: instanceOp({
        ...part,
        operationId: 'releaseHandover',
        summary: 'Give a conversation back to the bot',
        description: '404 NOT_FOUND when no handover is open for that phone.',
        tags: ['flows'],
        requestBody: body('HandoverReleaseRequest', { phone: '+15557654321' }),
        responses: {
          '200': ok('Released.', 'HandoverReleaseResponse', { success: true, instanceId: INSTANCE, phone: '+15557654321', released: true }),
          ...errors(400, 401, 404, 413, 415, 429),
        },
      }),
    },
    '/api/{id}/handovers': {
      get: instanceOp({
        ...part,
        operationId: 'listHandovers',
        summary: 'Open handovers (conversations a human has taken over)',
        tags: ['flows'],
        responses: { '200': ok('Open handovers.', 'HandoversResponse'), ...errors(401, 429) },
      }),
    },
  };
}
