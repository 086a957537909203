/**
 * Guards issue 24 ("`/openapi.json` has every new route with examples"; "docs/webhooks.md lists
 * every new event"): the answers of the group, call, presence and poll routes, their errors, and
 * the bodies of the new events (as webhooks and live events carry them) match the schemas the
 * document publishes; every event type of the gateway is documented in docs/webhooks.md.
 */
import test from 'ava';
import { readFile } from 'node:fs/promises';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { EVENT_TYPES } from '../../src/domain/vocabulary.js';
import type { GatewayEvent } from '../../src/events/types.js';
import { startTestDaemon, type ApiResponse } from '../helpers/daemon.js';

type Json = Record<string, unknown>;
interface Doc {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Json; example?: unknown }> }> }>>;
  webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: Json }> } } }>;
  components: Json;
}

function compiler(doc: Doc): (schema: Json) => ValidateFunction {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema({ $id: 'openapi', components: doc.components } as Json);
  return (schema) => ajv.compile(JSON.parse(JSON.stringify(schema).replace(/"\$ref":"#\/components\//g, '"$ref":"openapi#/components/')) as Json);
}

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

test('answers of the group, call, presence and poll routes and the bodies of their events match /openapi.json', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const events: GatewayEvent[] = [];
  d.core.bus.register({ name: 'test', handle: async (e) => void events.push(e) });
  const doc = (await d.request('GET', '/openapi.json')).body as Doc;
  const compile = compiler(doc);
  const inst = await d.connectedSandbox();
  const at = (p: string) => `/api/${inst.id}${p}`;
  const check = (res: ApiResponse, path: string, method: string, status: number): void => {
    t.is(res.status, status, `${method} ${path}: ${JSON.stringify(res.body)}`);
    const media = doc.paths[path]?.[method.toLowerCase()]?.responses[String(status)]?.content?.['application/json'];
    t.truthy(media, `${method} ${path} documents ${status}`);
    if (!media) return;
    const v = compile(media.schema);
    t.true(v(res.body), `${method} ${path} ${status}: ${JSON.stringify(v.errors)}`);
    if (status < 300) t.not(media.example, undefined, `${method} ${path} has an example`);
  };
  const call = (method: string, p: string, json?: unknown, body?: BodyInit) => d.request(method, at(p), { key: inst.key, ...(json !== undefined ? { json } : {}), ...(body ? { body } : {}) });

  const created = await call('POST', '/groups', { subject: 'Docs', participants: ['+15550300001'] });
  check(created, '/api/{id}/groups', 'POST', 201);
  const g = created.body.chatId as string;
  check(await call('PUT', `/groups/${g}`, { subject: 'Docs 2', locked: true }), '/api/{id}/groups/{chatId}', 'PUT', 200);
  check(await call('PUT', `/groups/${g}`, {}), '/api/{id}/groups/{chatId}', 'PUT', 400);
  check(await call('POST', `/groups/${g}/participants`, { action: 'add', participants: ['+15550300002'] }), '/api/{id}/groups/{chatId}/participants', 'POST', 200);
  const invite = await call('GET', `/groups/${g}/invite`);
  check(invite, '/api/{id}/groups/{chatId}/invite', 'GET', 200);
  check(await call('DELETE', `/groups/${g}/invite`), '/api/{id}/groups/{chatId}/invite', 'DELETE', 200);
  const form = new FormData();
  form.set('file', new Blob([new Uint8Array(PNG)], { type: 'image/png' }), 'p.png');
  check(await call('PUT', `/groups/${g}/picture`, undefined, form), '/api/{id}/groups/{chatId}/picture', 'PUT', 200);
  check(await call('DELETE', `/groups/${g}/picture`), '/api/{id}/groups/{chatId}/picture', 'DELETE', 200);
  check(await call('POST', `/groups/${g}/leave`), '/api/{id}/groups/{chatId}/leave', 'POST', 200);
  check(await call('POST', '/groups/join', { code: 'AAAAAAAAAAAAAAAAAAAAAA' }), '/api/{id}/groups/join', 'POST', 404);
  await call('POST', '/sandbox/group-event', { chatId: '120363000000000042@g.us', by: '+15550300003', action: 'add', participants: ['+10000000000'] });
  check(await call('POST', '/groups/120363000000000042@g.us/participants', { action: 'add', participants: ['+15550300004'] }), '/api/{id}/groups/{chatId}/participants', 'POST', 403);
  const played = await call('POST', '/sandbox/group-event', { chatId: '120363000000000042@g.us', by: '+15550300003', subject: 'Theirs', description: 'd', announce: true });
  check(played, '/api/{id}/sandbox/group-event', 'POST', 200);

  const offered = await call('POST', '/sandbox/call', { from: '+15550300005', video: true });
  check(offered, '/api/{id}/sandbox/call', 'POST', 200);
  check(await call('POST', `/calls/${offered.body.callId as string}/reject`), '/api/{id}/calls/{callId}/reject', 'POST', 200);
  check(await call('POST', `/calls/${offered.body.callId as string}/reject`), '/api/{id}/calls/{callId}/reject', 'POST', 404);

  check(await call('POST', '/presence/subscribe', { chatId: '15550300005@s.whatsapp.net' }), '/api/{id}/presence/subscribe', 'POST', 200);
  check(await call('POST', '/sandbox/presence', { from: '+15550300005', state: 'unavailable', lastSeen: '2026-01-01T00:00:00.000Z' }), '/api/{id}/sandbox/presence', 'POST', 200);

  const poll = await call('POST', '/send-poll', { phone: '+15550300006', question: 'Q?', options: ['a', 'b'] });
  check(await call('POST', '/sandbox/vote', { messageId: poll.body.messageId, from: '+15550300006', selected: ['b'] }), '/api/{id}/sandbox/vote', 'POST', 200);
  check(await call('GET', `/messages/${poll.body.messageId as string}`), '/api/{id}/messages/{messageId}', 'GET', 200);

  const types = new Set(events.map((e) => e.type));
  for (const type of ['group.joined', 'group.updated', 'group.participants', 'call.received', 'presence.updated', 'poll.vote'] as const) t.true(types.has(type), `a ${type} event was seen`);
  for (const e of events) {
    const v = compile(doc.webhooks[e.type]!.post.requestBody.content['application/json']!.schema);
    t.true(v(e), `${e.type}: ${JSON.stringify(v.errors)} in ${JSON.stringify(e)}`);
  }
});

test('docs/webhooks.md lists every event type', async (t) => {
  const text = await readFile(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');
  t.deepEqual(
    EVENT_TYPES.filter((type) => !text.includes(`| \`${type}\` |`)),
    [],
  );
});
