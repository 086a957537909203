/**
 * Guards issue 13 repair 4 (one schema per shape): `/openapi.json` is generated from the same
 * route definitions and TypeBox schemas that check requests, so it cannot drift from the app. The
 * tests validate the document's own examples and real answers of a running daemon against it with
 * ajv (JSON Schema 2020-12, the dialect of OpenAPI 3.1), check that every documented operation is
 * routed, and that every error code of the API is documented with its status.
 */
import test from 'ava';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { API_ERROR_CODES, ERROR_TABLE } from '../../src/domain/errors.js';
import { fakeFactory } from '../helpers/fake-connection.js';
import { startTestDaemon, waitFor, type ApiResponse, type TestDaemon } from '../helpers/daemon.js';

type Json = Record<string, unknown>;
interface Operation {
  operationId: string;
  parameters?: Array<{ name?: string; $ref?: string }>;
  requestBody?: { content: Record<string, { schema: Json; example?: unknown }> };
  responses: Record<string, { $ref?: string; content?: Record<string, { schema: Json; example?: unknown }> }>;
}
interface Doc {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Json>; parameters?: Record<string, { name: string }>; securitySchemes: Record<string, { name?: string }> };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

function operations(doc: Doc): Array<{ path: string; method: string; op: Operation }> {
  return Object.entries(doc.paths).flatMap(([path, item]) => METHODS.filter((m) => item[m]).map((m) => ({ path, method: m.toUpperCase(), op: item[m]! })));
}

/** An ajv that knows the document, so `#/components/...` refs resolve. */
function validatorFor(doc: Doc): (schema: Json) => ValidateFunction {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema({ $id: 'openapi', components: doc.components } as Json);
  const cache = new Map<Json, ValidateFunction>();
  return (schema) => {
    const known = cache.get(schema);
    if (known) return known;
    const rewritten = JSON.parse(JSON.stringify(schema).replace(/"\$ref":"#\/components\//g, '"$ref":"openapi#/components/')) as Json;
    const v = ajv.compile(rewritten);
    cache.set(schema, v);
    return v;
  };
}

async function served(): Promise<{ d: TestDaemon; doc: Doc; compile: (schema: Json) => ValidateFunction }> {
  const d = await startTestDaemon({ whatsapp: fakeFactory().factory });
  const res = await d.request('GET', '/openapi.json');
  if (res.status !== 200) throw new Error(`GET /openapi.json: ${res.status}`);
  const doc = res.body as Doc;
  return { d, doc, compile: validatorFor(doc) };
}

function responseSchema(doc: Doc, path: string, method: string, status: number): Json {
  const op = doc.paths[path]?.[method.toLowerCase()];
  if (!op) throw new Error(`${method} ${path} is not documented`);
  const response = op.responses[String(status)];
  if (!response) throw new Error(`${method} ${path} does not document status ${status}`);
  const schema = response.content?.['application/json']?.schema;
  if (!schema) throw new Error(`${method} ${path} ${status} has no JSON schema`);
  return schema;
}

test('the document is OpenAPI 3.1: unique operation ids, declared path parameters, a 2xx for each operation', async (t) => {
  const { d, doc } = await served();
  try {
    t.is(doc.openapi, '3.1.0');
    const ids = new Set<string>();
    const ops = operations(doc);
    t.true(ops.length >= 50, `only ${ops.length} operations`);
    for (const { path, method, op } of ops) {
      t.false(ids.has(op.operationId), `duplicate operationId ${op.operationId}`);
      ids.add(op.operationId);
      const params = (op.parameters ?? []).map((p) => (p.$ref ? doc.components.parameters?.[p.$ref.split('/').at(-1)!]?.name : p.name));
      for (const m of path.matchAll(/\{(\w+)\}/g)) t.true(params.includes(m[1]), `${method} ${path}: {${m[1]}} not declared`);
      t.true(Object.keys(op.responses).some((s) => s.startsWith('2')), `${op.operationId}: no success response`);
    }
    t.is(doc.components.securitySchemes.ApiKey?.name, 'X-API-Key');
    t.is(doc.components.securitySchemes.ServerSecret?.name, 'X-API-Secret');
  } finally {
    await d.close();
  }
});

test('every documented operation is routed (none answers "no route")', async (t) => {
  const { d, doc } = await served();
  try {
    const inst = await d.createInstance({ sandbox: true, premiumDays: 30 });
    for (const { path, method } of operations(doc)) {
      if (path.startsWith('/control/')) continue; // control routes answer only on the control socket
      const url = path.replace('{id}', inst.id).replace('{messageId}', '3EB0000000000000000001').replace('{chatId}', '15551234567@s.whatsapp.net').replace('{deliveryId}', 'msg_none');
      const answer = await d.request(method, url, { key: inst.key, secret: d.secret });
      const noRoute = answer.status === 404 && /no route/.test(String(answer.body?.error?.message));
      t.false(noRoute, `${method} ${path} answered "no route": documented but not routed`);
    }
  } finally {
    await d.close();
  }
});

test('every API error code is documented, under its status', async (t) => {
  const { d, doc } = await served();
  try {
    const documented = new Map<string, Set<number>>();
    for (const { op } of operations(doc)) {
      for (const [status, response] of Object.entries(op.responses)) {
        const schema = response.content?.['application/json']?.schema as { properties?: { error?: { properties?: { code?: { enum?: string[] } } } } } | undefined;
        for (const code of schema?.properties?.error?.properties?.code?.enum ?? []) {
          if (!documented.has(code)) documented.set(code, new Set());
          documented.get(code)!.add(Number(status));
        }
      }
    }
    for (const code of API_ERROR_CODES) {
      const row = ERROR_TABLE[code];
      if (!row.expose) continue; // answered as INTERNAL, never with its own code
      t.true(documented.get(code)?.has(row.status) ?? false, `${code} (${row.status}) not documented`);
    }
  } finally {
    await d.close();
  }
});

test('the examples in the document match their schemas', async (t) => {
  const { d, doc, compile } = await served();
  try {
    let n = 0;
    for (const { path, method, op } of operations(doc)) {
      for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) {
        // Issue 15: every route with examples; a multipart one too (its fields, the file shown as text).
        t.not(media.example, undefined, `${method} ${path}: no ${type} request example`);
        if (media.example === undefined) continue;
        n++;
        const v = compile(media.schema);
        t.true(v(media.example), `${method} ${path} request: ${JSON.stringify(v.errors)}`);
      }
      for (const [status, response] of Object.entries(op.responses)) {
        for (const [type, media] of Object.entries(response.content ?? {})) {
          // Every JSON success answer has an example (scripts/record-openapi-examples.ts records them).
          if (status.startsWith('2') && type === 'application/json' && path !== '/openapi.json') t.not(media.example, undefined, `${method} ${path} ${status}: no example`);
          if (media.example === undefined) continue;
          n++;
          const v = compile(media.schema);
          t.true(v(media.example), `${method} ${path} ${status}: ${JSON.stringify(v.errors)}`);
        }
      }
    }
    t.true(n >= 30, `only ${n} examples checked`);
  } finally {
    await d.close();
  }
});

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

test('real answers match the documented response schemas', async (t) => {
  const { d, doc, compile } = await served();
  const expectShape = (res: ApiResponse, path: string, method: string, status: number): void => {
    t.is(res.status, status, `${method} ${path}: ${JSON.stringify(res.body)}`);
    const v = compile(responseSchema(doc, path, method, status));
    t.true(v(res.body), `${method} ${path} ${status}: ${JSON.stringify(v.errors)} in ${JSON.stringify(res.body).slice(0, 300)}`);
  };
  try {
    expectShape(await d.request('GET', '/healthz'), '/healthz', 'GET', 200);
    const created = await d.request('POST', '/api/instances/create', { secret: d.secret, json: { sandbox: true, premiumDays: 30, name: 'docs', webhookUrl: 'http://127.0.0.1:9/hook', webhookSecret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' } });
    expectShape(created, '/api/instances/create', 'POST', 201);
    const id = created.body.instanceId as string;
    const key = created.body.apiKey as string;
    const at = (p: string, extra: Record<string, string> = {}) => Object.entries({ id, ...extra }).reduce((s, [k, v]) => s.replace(`{${k}}`, v), p);

    expectShape(await d.request('POST', '/api/instances/create', { key, json: {} }), '/api/instances/create', 'POST', 401);
    expectShape(await d.request('POST', '/api/instances/create', { secret: d.secret, json: { nmae: 'x' } }), '/api/instances/create', 'POST', 400);
    expectShape(await d.request('GET', '/api/instances', { secret: d.secret }), '/api/instances', 'GET', 200);
    expectShape(await d.request('GET', at('/api/instances/{id}'), { secret: d.secret }), '/api/instances/{id}', 'GET', 200);
    expectShape(await d.request('GET', at('/api/{id}/status'), { key }), '/api/{id}/status', 'GET', 200);
    expectShape(await d.request('GET', at('/api/{id}/status')), '/api/{id}/status', 'GET', 401);
    await waitFor(async () => (await d.request('GET', at('/api/{id}/status'), { key })).body.status === 'qr_code_generated', 3000, 'QR');
    expectShape(await d.request('GET', at('/api/{id}/qr-code'), { key }), '/api/{id}/qr-code', 'GET', 200);
    expectShape(await d.request('POST', at('/api/{id}/send'), { key, json: { phone: '+15551234567', message: 'hi' } }), '/api/{id}/send', 'POST', 503);
    expectShape(await d.request('POST', at('/api/{id}/sandbox/scan'), { key }), '/api/{id}/sandbox/scan', 'POST', 200);
    expectShape(await d.request('GET', at('/api/{id}/qr-code'), { key }), '/api/{id}/qr-code', 'GET', 409);
    const sent = await d.request('POST', at('/api/{id}/send'), { key, json: { phone: '+15551234567', message: 'hi' } });
    expectShape(sent, '/api/{id}/send', 'POST', 200);
    const messageId = sent.body.messageId as string;
    expectShape(await d.request('POST', at('/api/{id}/send'), { key, json: { phone: '12345', message: 'hi' } }), '/api/{id}/send', 'POST', 400);
    expectShape(await d.request('POST', at('/api/{id}/send'), { key, body: 'phone=1', headers: { 'content-type': 'text/plain' } }), '/api/{id}/send', 'POST', 415);
    expectShape(await d.request('POST', at('/api/{id}/send-location'), { key, json: { phone: '+15551234567', latitude: 1, longitude: 2 } }), '/api/{id}/send-location', 'POST', 200);
    expectShape(await d.request('POST', at('/api/{id}/send-contact'), { key, json: { phone: '+15551234567', contacts: [{ name: 'Ann', phone: '+15557654321' }] } }), '/api/{id}/send-contact', 'POST', 200);
    expectShape(await d.request('POST', at('/api/{id}/send-poll'), { key, json: { phone: '+15551234567', question: 'Q?', options: ['a', 'b'] } }), '/api/{id}/send-poll', 'POST', 200);

    const form = new FormData();
    form.set('phone', '+15551234567');
    form.set('caption', 'a pixel');
    form.set('file', new Blob([new Uint8Array(PNG)], { type: 'image/png' }), 'pixel.png');
    const media = await d.request('POST', at('/api/{id}/send-media'), { key, body: form });
    expectShape(media, '/api/{id}/send-media', 'POST', 200);
    t.is(media.body.mediaType, 'image');

    const chat = '15551234567@s.whatsapp.net';
    expectShape(await d.request('POST', at('/api/{id}/react'), { key, json: { chatId: chat, messageId, emoji: '👍' } }), '/api/{id}/react', 'POST', 200);
    expectShape(await d.request('POST', at('/api/{id}/messages/{messageId}/edit', { messageId }), { key, json: { chatId: chat, message: 'edited' } }), '/api/{id}/messages/{messageId}/edit', 'POST', 200);
    expectShape(await d.request('POST', at('/api/{id}/sandbox/receipt'), { key, json: { messageId, status: 'read' } }), '/api/{id}/sandbox/receipt', 'POST', 200);
    expectShape(await d.request('GET', at('/api/{id}/messages/{messageId}', { messageId }), { key }), '/api/{id}/messages/{messageId}', 'GET', 200);
    expectShape(await d.request('GET', at('/api/{id}/messages/{messageId}', { messageId: '3EB0000000000000000099' }), { key }), '/api/{id}/messages/{messageId}', 'GET', 404);
    expectShape(await d.request('POST', at('/api/{id}/sandbox/inbound'), { key, json: { from: '+15557654321', message: 'hello', name: 'Ana' } }), '/api/{id}/sandbox/inbound', 'POST', 200);
    expectShape(await d.request('GET', at('/api/{id}/chats'), { key }), '/api/{id}/chats', 'GET', 200);
    expectShape(await d.request('GET', at('/api/{id}/chats/{chatId}/messages', { chatId: chat }), { key }), '/api/{id}/chats/{chatId}/messages', 'GET', 200);
    expectShape(await d.request('POST', at('/api/{id}/read'), { key, json: { chatId: '15557654321@s.whatsapp.net' } }), '/api/{id}/read', 'POST', 200);
    expectShape(await d.request('POST', at('/api/{id}/presence'), { key, json: { chatId: chat, state: 'typing' } }), '/api/{id}/presence', 'POST', 200);
    expectShape(await d.request('POST', at('/api/{id}/contacts/check'), { key, json: { phones: ['+15551234567'] } }), '/api/{id}/contacts/check', 'POST', 200);
    expectShape(await d.request('GET', at('/api/{id}/groups'), { key }), '/api/{id}/groups', 'GET', 200);
    const sandboxSent = await d.request('GET', at('/api/{id}/sandbox/sent'), { key });
    expectShape(sandboxSent, '/api/{id}/sandbox/sent', 'GET', 200);
    t.true(sandboxSent.body.messages.length >= 5);
    expectShape(await d.request('GET', at('/api/{id}/sandbox/actions'), { key }), '/api/{id}/sandbox/actions', 'GET', 200);
    expectShape(await d.request('PUT', at('/api/{id}/webhook'), { key, json: { url: 'http://127.0.0.1:9/other', events: ['message.received'] } }), '/api/{id}/webhook', 'PUT', 200);
    expectShape(await d.request('PUT', at('/api/{id}/webhook'), { key, json: { url: 42 } }), '/api/{id}/webhook', 'PUT', 400);
    expectShape(await d.request('GET', at('/api/{id}/webhook/deliveries'), { key }), '/api/{id}/webhook/deliveries', 'GET', 200);
    // Chatbot flows: the example flow of the document, a handover, its release.
    const flow = doc.paths['/api/{id}/flow']?.put?.requestBody?.content['application/json']?.example;
    t.truthy(flow);
    expectShape(await d.request('PUT', at('/api/{id}/flow'), { key, json: flow }), '/api/{id}/flow', 'PUT', 200);
    expectShape(await d.request('PUT', at('/api/{id}/flow'), { key, json: { name: 'x', start: 'nowhere', nodes: {} } }), '/api/{id}/flow', 'PUT', 400);
    expectShape(await d.request('GET', at('/api/{id}/flow'), { key }), '/api/{id}/flow', 'GET', 200);
    expectShape(await d.request('POST', at('/api/{id}/handover/release'), { key, json: { phone: '+15557654321' } }), '/api/{id}/handover/release', 'POST', 404);
    expectShape(await d.request('GET', at('/api/{id}/handovers'), { key }), '/api/{id}/handovers', 'GET', 200);
    expectShape(await d.request('DELETE', at('/api/{id}/flow'), { key }), '/api/{id}/flow', 'DELETE', 200);
    expectShape(await d.request('GET', at('/api/{id}/flow'), { key }), '/api/{id}/flow', 'GET', 404);
    expectShape(await d.request('POST', at('/api/{id}/sandbox/disconnect'), { key }), '/api/{id}/sandbox/disconnect', 'POST', 200);
    expectShape(await d.request('POST', at('/api/instances/{id}/credits'), { secret: d.secret, json: { add: 5 } }), '/api/instances/{id}/credits', 'POST', 200);
    expectShape(await d.request('POST', at('/api/instances/{id}/premium'), { secret: d.secret, json: { days: 99_999_999 } }), '/api/instances/{id}/premium', 'POST', 400);

    // Sandbox routes on a WhatsApp instance are 404 NOT_FOUND, as documented.
    const real = await d.request('POST', '/api/instances/create', { secret: d.secret, json: { sandbox: false } });
    t.is(real.status, 201);
    expectShape(await d.request('GET', `/api/${real.body.instanceId}/sandbox/sent`, { key: real.body.apiKey }), '/api/{id}/sandbox/sent', 'GET', 404);
    expectShape(await d.request('DELETE', at('/api/instances/{id}'), { secret: d.secret }), '/api/instances/{id}', 'DELETE', 200);
  } finally {
    await d.close();
  }
});
