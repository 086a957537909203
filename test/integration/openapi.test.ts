import type Router from '@koa/router';
import test from 'ava';
import type { ConnectionFactory } from '../../src/connection/types.js';
import type { DaemonPlugin } from '../../src/daemon/boot.js';
import { daemonPlugins } from '../../src/daemon/plugins.js';
import { createFlowsPlugin } from '../../src/flows/plugin.js';
import { documentedRoutes, openApiDocument, servedDocument, type OpenApiDocument, type SchemaObject } from '../../src/ops/openapi/index.js';
import { registeredRoutes } from '../../src/ops/openapi-plugin.js';
import { startTestDaemon, waitFor, type ApiResponse, type TestDaemon } from '../helpers/daemon.js';

// ---- a small JSON Schema checker: just the keywords our document uses ----

type Doc = OpenApiDocument;

function resolve(doc: Doc, pointer: string): unknown {
  if (!pointer.startsWith('#/')) throw new Error(`external $ref ${pointer}`);
  let node: unknown = doc;
  for (const part of pointer.slice(2).split('/')) {
    node = (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    if (node === undefined) throw new Error(`$ref ${pointer} does not resolve`);
  }
  return node;
}

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function propertyNames(doc: Doc, s: SchemaObject): string[] {
  const r = s.$ref ? (resolve(doc, s.$ref) as SchemaObject) : s;
  return [...Object.keys(r.properties ?? {}), ...(r.allOf ?? []).flatMap((x) => propertyNames(doc, x))];
}

/**
 * Errors of `value` against `schema`. `strict` also reports properties the schema does not
 * document (unless it allows additional ones), so a route cannot grow undocumented fields.
 */
function check(doc: Doc, schema: SchemaObject, value: unknown, at = '$', strict = true): string[] {
  if (schema.$ref) return check(doc, resolve(doc, schema.$ref) as SchemaObject, value, at, strict);
  const errs: string[] = [];
  const t = typeOf(value);
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((x) => x === t || (x === 'number' && t === 'integer'))) return [`${at}: expected ${types.join('|')}, got ${t}`];
  }
  if (schema.const !== undefined && value !== schema.const) errs.push(`${at}: expected ${JSON.stringify(schema.const)}`);
  if (schema.enum && !schema.enum.includes(value as never)) errs.push(`${at}: ${JSON.stringify(value)} not in enum`);
  if (typeof value === 'string') {
    if (schema.pattern && !new RegExp(schema.pattern).test(value)) errs.push(`${at}: ${JSON.stringify(value.slice(0, 40))} does not match ${schema.pattern}`);
    if (schema.maxLength !== undefined && value.length > schema.maxLength) errs.push(`${at}: too long`);
    if (schema.minLength !== undefined && value.length < schema.minLength) errs.push(`${at}: too short`);
    if (schema.format === 'date-time' && Number.isNaN(Date.parse(value))) errs.push(`${at}: not a date-time`);
  }
  if (typeof value === 'number' && schema.minimum !== undefined && value < schema.minimum) errs.push(`${at}: below minimum`);
  if (Array.isArray(value)) {
    if (schema.items) value.forEach((v, i) => errs.push(...check(doc, schema.items as SchemaObject, v, `${at}[${i}]`, strict)));
    if (schema.minItems !== undefined && value.length < schema.minItems) errs.push(`${at}: too few items`);
  }
  if (t === 'object') {
    const o = value as Record<string, unknown>;
    for (const key of schema.required ?? []) if (!(key in o)) errs.push(`${at}: missing ${key}`);
    for (const [key, v] of Object.entries(o)) {
      const sub = schema.properties?.[key];
      if (sub) errs.push(...check(doc, sub, v, `${at}.${key}`, strict));
      else if (typeof schema.additionalProperties === 'object') errs.push(...check(doc, schema.additionalProperties, v, `${at}.${key}`, strict));
      else if (schema.additionalProperties === false) errs.push(`${at}.${key}: not allowed`);
      else if (strict && schema.properties && schema.additionalProperties === undefined && !schema.allOf) errs.push(`${at}.${key}: not documented`);
    }
    if (schema.minProperties !== undefined && Object.keys(o).length < schema.minProperties) errs.push(`${at}: too few properties`);
  }
  if (schema.allOf) {
    for (const s of schema.allOf) errs.push(...check(doc, s, value, at, false));
    if (strict && t === 'object') {
      const known = new Set(schema.allOf.flatMap((s) => propertyNames(doc, s)));
      for (const key of Object.keys(value as object)) if (!known.has(key)) errs.push(`${at}.${key}: not documented`);
    }
  }
  if (schema.oneOf) {
    const passing = schema.oneOf.filter((s) => check(doc, s, value, at, strict).length === 0).length;
    if (passing !== 1) errs.push(`${at}: matches ${passing} of oneOf`);
  }
  if (schema.anyOf && !schema.anyOf.some((s) => check(doc, s, value, at, strict).length === 0)) errs.push(`${at}: matches none of anyOf`);
  return errs;
}

/** The JSON schema of a documented response (after following $refs). */
function responseSchema(doc: Doc, path: string, method: string, status: number): SchemaObject {
  const operation = doc.paths[path]?.[method.toLowerCase() as 'get'];
  if (!operation) throw new Error(`${method} ${path} is not documented`);
  let response: unknown = operation.responses[String(status)];
  if (response === undefined) throw new Error(`${method} ${path} does not document status ${status}`);
  const r = response as { $ref?: string };
  if (r.$ref) response = resolve(doc, r.$ref);
  const schema = (response as { content?: Record<string, { schema: SchemaObject }> }).content?.['application/json']?.schema;
  if (!schema) throw new Error(`${method} ${path} ${status} has no JSON schema`);
  return schema;
}

// ---- the daemon under test: the production plugin set plus a probe that keeps the router ----

function withRouter(): { plugin: DaemonPlugin; router: () => Router } {
  let captured: Router | undefined;
  return {
    plugin: {
      name: 'test-router-probe',
      setup(_deps, { appOptions }) {
        (appOptions.extensions ??= []).push((router) => {
          captured = router;
        });
      },
    },
    router: () => {
      if (!captured) throw new Error('router not captured');
      return captured;
    },
  };
}

/** Stands in for Baileys: a WhatsApp instance that never connects. */
const idleWhatsApp = (): ConnectionFactory => (record) => ({
  instanceId: record.id,
  status: 'initializing',
  qr: null,
  reason: null,
  start: () => undefined,
  stop: async () => undefined,
  logout: async () => undefined,
  send: async () => {
    throw new Error('not connected');
  },
});

async function productionDaemon(): Promise<{ d: TestDaemon; router: Router; plugins: DaemonPlugin[] }> {
  const plugins = daemonPlugins();
  // Until the flows part is wired into production, load it here so its routes are checked too.
  if (!plugins.some((p) => p.name === 'flows')) plugins.push(createFlowsPlugin());
  const probe = withRouter();
  const d = await startTestDaemon({ plugins: [...plugins, probe.plugin], baileysFactory: idleWhatsApp });
  return { d, router: probe.router(), plugins };
}

const full = openApiDocument();

test('the production daemon serves the docs and metrics parts', (t) => {
  const names = daemonPlugins().map((p) => p.name);
  t.true(names.includes('docs'));
  t.true(names.includes('metrics'));
});

test('every route the daemon registers is documented', async (t) => {
  const { d, router } = await productionDaemon();
  try {
    const documented = new Set(documentedRoutes(full).map((r) => `${r.method} ${r.path}`));
    const registered = [...registeredRoutes(router)];
    t.true(registered.length >= 13, `only ${registered.length} routes registered`);
    const undocumented = registered.filter((r) => !documented.has(r));
    t.deepEqual(undocumented, [], 'routes missing from src/ops/openapi');
  } finally {
    await d.close();
  }
});

test('every served operation answers (no 404) and optional parts are served whole or not at all', async (t) => {
  const { d, router } = await productionDaemon();
  try {
    const res = await d.request('GET', '/openapi.json');
    t.is(res.status, 200);
    t.regex(res.headers.get('content-type') ?? '', /^application\/json/);
    const served = res.body as Doc;
    t.is(served.openapi, '3.1.0');
    const servedRoutes = documentedRoutes(served);
    // Core routes are always in the served document; so are metrics and docs in production.
    for (const r of documentedRoutes(full)) {
      if (r.part === null || r.part === 'metrics' || r.part === 'docs') t.true(servedRoutes.some((s) => s.path === r.path && s.method === r.method), `${r.method} ${r.path} not served`);
    }
    const registered = registeredRoutes(router);
    for (const part of new Set(documentedRoutes(full).map((r) => r.part).filter((p) => p !== null))) {
      const ops = documentedRoutes(full).filter((r) => r.part === part);
      const present = ops.filter((r) => registered.has(`${r.method} ${r.path}`));
      t.true(present.length === 0 || present.length === ops.length, `part ${part}: only ${present.map((r) => `${r.method} ${r.path}`).join(', ')} registered`);
      if (present.length === 0) t.log(`part "${part}" is not loaded in daemonPlugins(); its ${ops.length} routes were not checked against the app`);
    }

    const inst = await d.createInstance({ sandbox: true });
    for (const r of servedRoutes) {
      const answer = await d.request(r.method, r.path.replace('{id}', inst.id));
      const noRoute = answer.status === 404 && answer.body?.error?.code === 'NOT_FOUND';
      t.false(noRoute, `${r.method} ${r.path} answered 404 NOT_FOUND: documented but not routed`);
    }
  } finally {
    await d.close();
  }
});

test('the served document drops optional operations that are not registered and keeps the core', (t) => {
  const bare = servedDocument(full, new Set());
  t.truthy(bare.paths['/api/{id}/send']?.post);
  t.truthy(bare.paths['/healthz']?.get);
  t.is(bare.paths['/metrics'], undefined);
  t.is(bare.paths['/api/{id}/flow'], undefined);
  const some = servedDocument(full, new Set(['GET /api/{id}/flow', 'GET /metrics']));
  t.deepEqual(Object.keys(some.paths['/api/{id}/flow'] ?? {}), ['get']);
  t.truthy(some.paths['/metrics']?.get);
});

test('every $ref resolves, operation ids are unique, path parameters are declared', (t) => {
  const refs: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (typeof node === 'object' && node !== null) {
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string') refs.push(v);
        else walk(v);
      }
    }
  };
  walk(full);
  t.true(refs.length > 20);
  for (const r of refs) t.notThrows(() => resolve(full, r), r);

  const ids = new Set<string>();
  for (const [path, item] of Object.entries(full.paths)) {
    for (const op of Object.values(item)) {
      if (typeof op !== 'object' || op === null || !('operationId' in op)) continue;
      t.false(ids.has(op.operationId), `duplicate operationId ${op.operationId}`);
      ids.add(op.operationId);
      const params = (op.parameters ?? []).map((p) => ('$ref' in p ? (resolve(full, p.$ref) as { name: string }) : p).name);
      for (const m of path.matchAll(/\{(\w+)\}/g)) t.true(params.includes(m[1] ?? ''), `${path}: {${m[1]}} not declared`);
      t.true(Object.keys(op.responses).some((s) => s.startsWith('2')), `${op.operationId}: no success response`);
      t.truthy(op.responses['500'], `${op.operationId}: no 500`);
    }
  }
});

test('every error code of the contract is documented with its status', (t) => {
  const codes = (full.components.schemas.ErrorCode?.enum ?? []) as string[];
  for (const code of ['MISSING_FIELD', 'INVALID_FIELD', 'INVALID_PHONE', 'INVALID_JSON', 'UNAUTHORIZED', 'PREMIUM_REQUIRED', 'QUOTA_EXHAUSTED', 'NOT_FOUND', 'QR_NOT_AVAILABLE', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'RATE_LIMITED', 'CONNECTION_NOT_READY', 'INTERNAL']) {
    t.true(codes.includes(code), code);
  }
  const e403 = full.components.schemas.Error403;
  t.deepEqual(check(full, e403 as SchemaObject, { success: false, error: { code: 'QUOTA_EXHAUSTED', message: 'x' } }), []);
  t.notDeepEqual(check(full, e403 as SchemaObject, { success: false, error: { code: 'UNAUTHORIZED', message: 'x' } }), []);
  t.deepEqual(Object.keys(full.components.securitySchemes).sort(), ['ApiKey', 'ServerSecret']);
  t.is(full.components.securitySchemes.ApiKey?.name, 'X-API-Key');
  t.is(full.components.securitySchemes.ServerSecret?.name, 'X-API-Secret');
});

test('the examples in the document match their schemas', (t) => {
  let n = 0;
  for (const [path, item] of Object.entries(full.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (typeof op !== 'object' || op === null || !('responses' in op)) continue;
      for (const [name, media] of Object.entries(op.requestBody?.content ?? {})) {
        if (media.example !== undefined) {
          n++;
          t.deepEqual(check(full, media.schema, media.example), [], `${method} ${path} request ${name}`);
        }
      }
      for (const [status, resp] of Object.entries(op.responses)) {
        const r = ('$ref' in resp ? resolve(full, resp.$ref as string) : resp) as { content?: Record<string, { schema: SchemaObject; example?: unknown }> };
        for (const media of Object.values(r.content ?? {})) {
          if (media.example === undefined) continue;
          n++;
          t.deepEqual(check(full, media.schema, media.example), [], `${method} ${path} ${status}`);
        }
      }
    }
  }
  t.true(n >= 15, `only ${n} examples checked`);
});

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

test('real answers match the documented response schemas', async (t) => {
  const { d } = await productionDaemon();
  const expectShape = (res: ApiResponse, path: string, method: string, status: number): void => {
    t.is(res.status, status, `${method} ${path}: ${JSON.stringify(res.body)}`);
    t.deepEqual(check(full, responseSchema(full, path, method, status), res.body), [], `${method} ${path} ${status}`);
  };
  try {
    expectShape(await d.request('GET', '/healthz'), '/healthz', 'GET', 200);
    const created = await d.request('POST', '/api/instances/create', { secret: d.secret, json: { sandbox: true, name: 'docs', webhookUrl: 'http://127.0.0.1:9/hook', webhookSecret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' } });
    expectShape(created, '/api/instances/create', 'POST', 201);
    const id = created.body.instanceId as string;
    const key = created.body.apiKey as string;
    const at = (p: string) => p.replace('{id}', id);

    expectShape(await d.request('POST', '/api/instances/create', { key, json: {} }), '/api/instances/create', 'POST', 401);
    expectShape(await d.request('GET', at('/api/{id}/status'), { key }), '/api/{id}/status', 'GET', 200);
    expectShape(await d.request('GET', at('/api/{id}/status')), '/api/{id}/status', 'GET', 401);
    await waitFor(async () => (await d.request('GET', at('/api/{id}/status'), { key })).body.status === 'qr_code_generated', 3000, 'QR');
    expectShape(await d.request('GET', at('/api/{id}/qr-code'), { key }), '/api/{id}/qr-code', 'GET', 200);
    expectShape(await d.request('POST', at('/api/{id}/send'), { key, json: { phone: '+15551234567', message: 'hi' } }), '/api/{id}/send', 'POST', 503);
    expectShape(await d.request('POST', at('/api/{id}/sandbox/scan'), { key }), '/api/{id}/sandbox/scan', 'POST', 200);
    expectShape(await d.request('GET', at('/api/{id}/qr-code'), { key }), '/api/{id}/qr-code', 'GET', 409);
    expectShape(await d.request('POST', at('/api/{id}/send'), { key, json: { phone: '+15551234567', message: 'hi' } }), '/api/{id}/send', 'POST', 200);
    expectShape(await d.request('POST', at('/api/{id}/send'), { key, json: { phone: '12345', message: 'hi' } }), '/api/{id}/send', 'POST', 400);
    expectShape(await d.request('POST', at('/api/{id}/send'), { key, body: 'phone=1', headers: { 'content-type': 'text/plain' } }), '/api/{id}/send', 'POST', 415);

    const form = new FormData();
    form.set('phone', '+15551234567');
    form.set('caption', 'a pixel');
    form.set('file', new Blob([new Uint8Array(PNG)], { type: 'image/png' }), 'pixel.png');
    const media = await d.request('POST', at('/api/{id}/send-media'), { key, body: form });
    expectShape(media, '/api/{id}/send-media', 'POST', 200);
    t.is(media.body.mediaType, 'image');

    expectShape(await d.request('POST', at('/api/{id}/sandbox/inbound'), { key, json: { from: '+15557654321', message: 'hello', name: 'Ana' } }), '/api/{id}/sandbox/inbound', 'POST', 200);
    const sent = await d.request('GET', at('/api/{id}/sandbox/sent'), { key });
    expectShape(sent, '/api/{id}/sandbox/sent', 'GET', 200);
    t.true(sent.body.messages.length >= 2);
    expectShape(await d.request('PUT', at('/api/{id}/webhook'), { key, json: { url: 'http://127.0.0.1:9/other', events: ['message.received'] } }), '/api/{id}/webhook', 'PUT', 200);
    expectShape(await d.request('PUT', at('/api/{id}/webhook'), { key, json: {} }), '/api/{id}/webhook', 'PUT', 400);
    // Chatbot flows: the example flow of the document, a handover, its release.
    const flow = full.paths['/api/{id}/flow']?.put?.requestBody?.content['application/json']?.example;
    t.truthy(flow);
    expectShape(await d.request('PUT', at('/api/{id}/flow'), { key, json: flow }), '/api/{id}/flow', 'PUT', 200);
    expectShape(await d.request('PUT', at('/api/{id}/flow'), { key, json: { name: 'x', start: 'nowhere', nodes: {} } }), '/api/{id}/flow', 'PUT', 400);
    expectShape(await d.request('GET', at('/api/{id}/flow'), { key }), '/api/{id}/flow', 'GET', 200);
    expectShape(await d.request('POST', at('/api/{id}/handover/release'), { key, json: { phone: '+15557654321' } }), '/api/{id}/handover/release', 'POST', 404);
    for (const message of ['hello', '2']) {
      await d.request('POST', at('/api/{id}/sandbox/inbound'), { key, json: { from: '+15557654321', message, name: 'Ana' } });
    }
    const handovers = await waitFor(async () => {
      const r = await d.request('GET', at('/api/{id}/handovers'), { key });
      return r.body.handovers?.length === 1 ? r : null;
    }, 3000, 'handover');
    expectShape(handovers, '/api/{id}/handovers', 'GET', 200);
    expectShape(await d.request('POST', at('/api/{id}/handover/release'), { key, json: { phone: '+15557654321' } }), '/api/{id}/handover/release', 'POST', 200);
    expectShape(await d.request('DELETE', at('/api/{id}/flow'), { key }), '/api/{id}/flow', 'DELETE', 200);
    expectShape(await d.request('GET', at('/api/{id}/flow'), { key }), '/api/{id}/flow', 'GET', 404);

    expectShape(await d.request('POST', at('/api/{id}/sandbox/disconnect'), { key }), '/api/{id}/sandbox/disconnect', 'POST', 200);

    // Sandbox routes on a real (non-sandbox) instance are 404 NOT_FOUND, as documented.
    const real = await d.request('POST', '/api/instances/create', { secret: d.secret, json: { sandbox: false } });
    t.is(real.status, 201);
    expectShape(await d.request('GET', `/api/${real.body.instanceId}/sandbox/sent`, { key: real.body.apiKey }), '/api/{id}/sandbox/sent', 'GET', 404);
  } finally {
    await d.close();
  }
});
