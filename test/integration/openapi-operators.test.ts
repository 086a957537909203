/**
 * Guards issue 25 ("OpenAPI: every new route with examples"): the answers (and errors) of the
 * operator, audit, usage, claim, search and optional-flow routes match the schemas /openapi.json
 * publishes, and each has an example; the audit route names both credentials it takes.
 */
import test from 'ava';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { startTestDaemon, type ApiResponse } from '../helpers/daemon.js';

type Json = Record<string, unknown>;
interface Doc {
  paths: Record<string, Record<string, { security?: unknown[]; responses: Record<string, { content?: Record<string, { schema: Json; example?: unknown }> }> }>>;
  components: Json;
}

function compiler(doc: Doc): (schema: Json) => ValidateFunction {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema({ $id: 'openapi', components: doc.components } as Json);
  return (schema) => ajv.compile(JSON.parse(JSON.stringify(schema).replace(/"\$ref":"#\/components\//g, '"$ref":"openapi#/components/')) as Json);
}

test('answers of the operator, audit, usage, claim, search and optional-flow routes match /openapi.json', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const doc = (await d.request('GET', '/openapi.json')).body as Doc;
  const compile = compiler(doc);
  const check = (res: ApiResponse, path: string, method: string, status: number): void => {
    t.is(res.status, status, `${method} ${path}: ${JSON.stringify(res.body)}`);
    const media = doc.paths[path]?.[method.toLowerCase()]?.responses[String(status)]?.content?.['application/json'];
    t.truthy(media, `${method} ${path} documents ${status}`);
    if (!media) return;
    const v = compile(media.schema);
    t.true(v(res.body), `${method} ${path} ${status}: ${JSON.stringify(v.errors)}`);
    if (status < 300) t.not(media.example, undefined, `${method} ${path} has an example`);
  };
  const secret = { secret: d.secret };
  const inst = await d.connectedSandbox({ name: 'shop', credits: 5 });

  check(await d.request('POST', '/api/operators', { ...secret, json: { name: 'bob', role: 'agent', instances: [inst.id] } }), '/api/operators', 'POST', 201);
  check(await d.request('POST', '/api/operators', { ...secret, json: { name: 'bob', role: 'agent' } }), '/api/operators', 'POST', 409);
  check(await d.request('GET', '/api/operators', secret), '/api/operators', 'GET', 200);
  check(await d.request('POST', '/api/operators/bob/reset', secret), '/api/operators/{name}/reset', 'POST', 200);
  check(await d.request('DELETE', '/api/operators/bob', secret), '/api/operators/{name}', 'DELETE', 200);
  check(await d.request('DELETE', '/api/operators/bob', secret), '/api/operators/{name}', 'DELETE', 404);

  await d.request('POST', `/api/${inst.id}/sandbox/inbound`, { key: inst.key, json: { from: '+15550001111', message: 'where is my order', name: 'Ann' } });
  await d.request('POST', `/api/${inst.id}/send`, { key: inst.key, json: { phone: '+15550001111', message: 'today' } });
  check(await d.request('POST', `/api/${inst.id}/handover/claim`, { key: inst.key, json: { chatId: '15550001111@s.whatsapp.net' } }), '/api/{id}/handover/claim', 'POST', 200);
  check(await d.request('GET', `/api/${inst.id}/handovers`, { key: inst.key }), '/api/{id}/handovers', 'GET', 200);
  check(await d.request('POST', `/api/${inst.id}/handover/claim`, { key: inst.key, json: { chatId: '15550009999@s.whatsapp.net', claim: false } }), '/api/{id}/handover/claim', 'POST', 200);
  check(await d.request('GET', `/api/${inst.id}/search?q=order`, { key: inst.key }), '/api/{id}/search', 'GET', 200);
  check(await d.request('GET', `/api/${inst.id}/search`, { key: inst.key }), '/api/{id}/search', 'GET', 400);
  check(await d.request('GET', `/api/${inst.id}/flow?optional=true`, { key: inst.key }), '/api/{id}/flow', 'GET', 200);
  check(await d.request('GET', `/api/${inst.id}/flow`, { key: inst.key }), '/api/{id}/flow', 'GET', 404);
  check(await d.request('GET', `/api/instances/${inst.id}/usage`, secret), '/api/instances/{id}/usage', 'GET', 200);
  check(await d.request('POST', `/api/instances/${inst.id}/credits`, { ...secret, json: { add: -100 } }), '/api/instances/{id}/credits', 'POST', 409);
  check(await d.request('GET', '/api/audit?limit=2', secret), '/api/audit', 'GET', 200);
  check(await d.request('GET', `/api/audit?instanceId=${inst.id}`, { key: inst.key }), '/api/audit', 'GET', 200);
  check(await d.request('GET', '/api/audit', { key: inst.key }), '/api/audit', 'GET', 401);
  t.deepEqual(doc.paths['/api/audit']?.get?.security, [{ ServerSecret: [] }, { ApiKey: [] }]);
});
