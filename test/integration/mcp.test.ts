/**
 * Guards issue 24, "AI agents (MCP)" (DESIGN.md part 3): `/api/{id}/mcp` is a Model Context
 * Protocol server for the instance, reached here with the SDK's own Client and
 * StreamableHTTPClientTransport against a real daemon on port 0 (sandbox instances):
 * - it lists the seven tools and every one of them works, answering what its REST route answers;
 * - a send through MCP costs exactly the credit a REST send costs (non-premium balance before and after),
 *   and counts against the same per-minute send limit (RATE_LIMITED with its Retry-After);
 * - no credits: the same error code and message as REST (QUOTA_EXHAUSTED, the send service's);
 * - a bad argument: a tool error with the REST route's code and message; an unknown tool a protocol error;
 * - 401 (the DESIGN.md error body) without a key, with a Bearer of a wrong key, with another instance's key;
 * - media from a URL at a private address is refused exactly as REST refuses it, and never fetched;
 * - GET and DELETE answer 405 (stateless), a body over the JSON limit 413, as every JSON route;
 * - the 200 answer matches what /openapi.json documents for the route.
 */
import test from 'ava';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const ALICE = '+15551234567';
const ALICE_CHAT = '15551234567@s.whatsapp.net';

/** An MCP client of the instance, as an agent connects: the key as a Bearer token. */
async function connect(d: TestDaemon, id: string, key: string, header: 'bearer' | 'x-api-key' = 'bearer'): Promise<Client> {
  const client = new Client({ name: 'gateway-test', version: '1.0.0' });
  const headers: Record<string, string> = header === 'bearer' ? { authorization: `Bearer ${key}` } : { 'x-api-key': key };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${d.url}/api/${id}/mcp`), { requestInit: { headers } }));
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The REST error body a failed tool carries as its text. */
function errorOf(result: CallToolResult): unknown {
  if (!result.isError) throw new Error(`expected a tool error, got ${JSON.stringify(result).slice(0, 300)}`);
  const first = result.content[0];
  if (first?.type !== 'text') throw new Error('no text content');
  return JSON.parse(first.text);
}

async function balance(d: TestDaemon, id: string): Promise<number> {
  return (await d.request('GET', `/api/instances/${id}`, { secret: d.secret })).body.credits as number;
}

/** A local file server (loopback: private to the gateway's address rules). */
async function fileServer(): Promise<{ server: Server; url: string; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

test('tools/list names the seven tools with the REST schemas, and every tool answers what its REST route answers', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const files = await fileServer();
  t.teardown(() => files.server.close());
  const inst = await d.connectedSandbox({ credits: 20 });
  const rest = (method: string, path: string, json?: unknown) => d.request(method, `/api/${inst.id}${path}`, { key: inst.key, ...(json !== undefined ? { json } : {}) });
  // Something to list: a group the account made, and a contact who wrote.
  t.is((await rest('POST', '/groups', { subject: 'Team', participants: ['+15550000001'] })).status, 201);
  t.is((await rest('POST', '/sandbox/inbound', { from: '+15557654321', message: 'hello there', name: 'Bea' })).status, 200);

  const client = await connect(d, inst.id, inst.key);
  t.teardown(() => client.close());
  t.is(client.getServerVersion()?.name, 'wa-gateway');
  const { tools } = await client.listTools();
  t.deepEqual(tools.map((x) => x.name).sort(), ['check_numbers', 'get_chat_messages', 'get_message', 'list_chats', 'list_groups', 'send_media', 'send_text']);
  const doc = (await d.request('GET', '/openapi.json')).body as { paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>> };
  t.deepEqual(tools.find((x) => x.name === 'send_text')?.inputSchema, doc.paths['/api/{id}/send']?.post?.requestBody?.content['application/json']?.schema as never, 'send_text takes the body of POST /send');
  t.like(tools.find((x) => x.name === 'list_chats')?.annotations, { readOnlyHint: true, openWorldHint: false });
  t.like(tools.find((x) => x.name === 'check_numbers')?.annotations, { readOnlyHint: true, openWorldHint: true });
  t.false(tools.find((x) => x.name === 'send_text')?.annotations?.readOnlyHint);

  // send_text: the REST answer, and the sandbox saw the message.
  const text = await call(client, 'send_text', { phone: ALICE, message: 'Hello from an agent' });
  t.falsy(text.isError, JSON.stringify(text));
  t.like(text.structuredContent, { success: true, instanceId: inst.id, to: ALICE_CHAT, quotaRemaining: '19' });
  t.deepEqual(JSON.parse((text.content[0] as { text: string }).text), text.structuredContent, 'the text content is the same JSON');
  const messageId = text.structuredContent?.messageId as string;
  const sent = (await rest('GET', '/sandbox/sent')).body.messages as Array<{ messageId: string; to: string; message?: string }>;
  t.like(sent.find((m) => m.messageId === messageId), { to: ALICE_CHAT, type: 'text', message: 'Hello from an agent' });

  // send_media: fetched from the URL, typed by content.
  const media = await call(client, 'send_media', { phone: ALICE, url: `${files.url}/pixel`, caption: 'a pixel' });
  t.falsy(media.isError, JSON.stringify(media));
  t.like(media.structuredContent, { success: true, to: ALICE_CHAT, mediaType: 'image', quotaRemaining: '18' });
  t.like((await rest('GET', '/sandbox/sent')).body.messages.find((m: { messageId: string }) => m.messageId === media.structuredContent?.messageId), { type: 'image', caption: 'a pixel' });
  t.deepEqual(files.hits, ['/pixel']);

  // get_message: the same body as GET /messages/{messageId}.
  const message = await call(client, 'get_message', { messageId });
  t.deepEqual(message.structuredContent, (await rest('GET', `/messages/${messageId}`)).body);
  t.like(message.structuredContent, { messageId, status: 'sent', fromMe: true, text: 'Hello from an agent' });

  // list_chats and get_chat_messages: the same bodies as their GET routes.
  const chats = await call(client, 'list_chats');
  t.deepEqual(chats.structuredContent, (await rest('GET', '/chats')).body);
  t.true((chats.structuredContent?.chats as Array<{ chatId: string }>).some((c) => c.chatId === '15557654321@s.whatsapp.net'));
  const history = await call(client, 'get_chat_messages', { chatId: ALICE_CHAT, limit: 1 });
  t.deepEqual(history.structuredContent, (await rest('GET', `/chats/${ALICE_CHAT}/messages?limit=1`)).body);
  t.is((history.structuredContent?.messages as unknown[]).length, 1);
  t.truthy(history.structuredContent?.nextBefore);

  // check_numbers and list_groups: the directory lookups.
  const check = await call(client, 'check_numbers', { phones: [ALICE] });
  t.deepEqual(check.structuredContent, (await rest('POST', '/contacts/check', { phones: [ALICE] })).body);
  const groups = await call(client, 'list_groups');
  t.deepEqual(groups.structuredContent, (await rest('GET', '/groups')).body);
  t.deepEqual((groups.structuredContent?.groups as Array<{ subject: string }>).map((g) => g.subject), ['Team']);
});

test('a send through MCP costs exactly what a send through REST costs', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const inst = await d.connectedSandbox({ credits: 5 });
  const client = await connect(d, inst.id, inst.key);
  t.teardown(() => client.close());
  t.is(await balance(d, inst.id), 5);

  const viaRest = await d.request('POST', `/api/${inst.id}/send`, { key: inst.key, json: { phone: ALICE, message: 'one' } });
  t.is(viaRest.status, 200);
  const afterRest = await balance(d, inst.id);
  const viaMcp = await call(client, 'send_text', { phone: ALICE, message: 'two' });
  t.falsy(viaMcp.isError);
  const afterMcp = await balance(d, inst.id);
  t.is(5 - afterRest, 1, 'REST: one credit');
  t.is(afterRest - afterMcp, 5 - afterRest, 'MCP: the same one credit');
  t.is(viaRest.body.quotaRemaining, '4');
  t.is(viaMcp.structuredContent?.quotaRemaining, '3');

  // The free tools cost nothing.
  await call(client, 'check_numbers', { phones: [ALICE] });
  await call(client, 'list_chats');
  t.is(await balance(d, inst.id), 3);
});

test('MCP and REST sends share the per-minute send limit: past it both are RATE_LIMITED, the tool saying when to retry', async (t) => {
  const d = await startTestDaemon({ config: { rateLimit: { sendsPerMinute: 2 } } });
  t.teardown(() => d.close());
  const inst = await d.connectedSandbox({ credits: 10 });
  const client = await connect(d, inst.id, inst.key);
  t.teardown(() => client.close());
  t.is((await d.request('POST', `/api/${inst.id}/send`, { key: inst.key, json: { phone: ALICE, message: 'one' } })).status, 200);
  t.falsy((await call(client, 'send_text', { phone: ALICE, message: 'two' })).isError);
  const viaRest = await d.request('POST', `/api/${inst.id}/send`, { key: inst.key, json: { phone: ALICE, message: 'three' } });
  t.is(viaRest.status, 429);
  t.is(viaRest.body.error.code, 'RATE_LIMITED');
  const viaMcp = await call(client, 'send_text', { phone: ALICE, message: 'four' });
  t.deepEqual(errorOf(viaMcp), viaRest.body);
  t.regex((viaMcp.content[1] as { text: string }).text, /^Retry after \d+ s\.$/);
  t.truthy(viaRest.headers.get('retry-after'));
  t.is(await balance(d, inst.id), 8, 'the two refused sends cost nothing');
});

test('no credits: the tool error carries the same code and message as the REST answer, and nothing is sent', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const inst = await d.connectedSandbox({ credits: 0 });
  const client = await connect(d, inst.id, inst.key);
  t.teardown(() => client.close());
  const viaRest = await d.request('POST', `/api/${inst.id}/send`, { key: inst.key, json: { phone: ALICE, message: 'hi' } });
  t.is(viaRest.status, 403);
  t.is(viaRest.body.error.code, 'QUOTA_EXHAUSTED');
  const viaMcp = await call(client, 'send_text', { phone: ALICE, message: 'hi' });
  t.deepEqual(errorOf(viaMcp), viaRest.body);
  const files = await fileServer();
  t.teardown(() => files.server.close());
  const url = `${files.url}/pixel`;
  const mediaRest = await d.request('POST', `/api/${inst.id}/send-media`, { key: inst.key, json: { phone: ALICE, url } });
  t.is(mediaRest.status, 403);
  t.deepEqual(errorOf(await call(client, 'send_media', { phone: ALICE, url })), mediaRest.body);
  t.deepEqual((await d.request('GET', `/api/${inst.id}/sandbox/sent`, { key: inst.key })).body.messages, []);
});

test('a bad argument is a tool error with the REST code and message; an unknown tool is a protocol error', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const inst = await d.connectedSandbox();
  const client = await connect(d, inst.id, inst.key);
  t.teardown(() => client.close());
  const cases: Array<[string, Record<string, unknown>, string, Record<string, unknown>, string]> = [
    ['send_text', { phone: '12345', message: 'hi' }, '/send', { phone: '12345', message: 'hi' }, 'INVALID_PHONE'],
    ['send_text', { phone: ALICE }, '/send', { phone: ALICE }, 'MISSING_FIELD'],
    ['send_text', { phone: ALICE, message: 'hi', colour: 'red' }, '/send', { phone: ALICE, message: 'hi', colour: 'red' }, 'INVALID_FIELD'],
    ['send_text', { phone: ALICE, to: ALICE_CHAT, message: 'hi' }, '/send', { phone: ALICE, to: ALICE_CHAT, message: 'hi' }, 'INVALID_FIELD'],
    ['check_numbers', { phones: [] }, '/contacts/check', { phones: [] }, 'INVALID_FIELD'],
  ];
  for (const [tool, args, path, json, code] of cases) {
    const viaRest = await d.request('POST', `/api/${inst.id}${path}`, { key: inst.key, json });
    t.is(viaRest.body.error?.code, code, `${path} ${JSON.stringify(json)}`);
    t.deepEqual(errorOf(await call(client, tool, args)), viaRest.body, `${tool} ${JSON.stringify(args)}`);
  }
  const chat = await call(client, 'get_chat_messages', { chatId: 'not-a-chat' });
  t.deepEqual(errorOf(chat), (await d.request('GET', `/api/${inst.id}/chats/not-a-chat/messages`, { key: inst.key })).body);
  const missing = await call(client, 'get_message', { messageId: '3EB0000000000000000099' });
  t.like(errorOf(missing), { success: false, error: { code: 'NOT_FOUND' } });
  const noUrl = await call(client, 'send_media', { phone: ALICE });
  t.like(errorOf(noUrl), { error: { code: 'MISSING_FIELD' } });
  t.regex((errorOf(noUrl) as { error: { message: string } }).error.message, /url/);
  const err = await t.throwsAsync(call(client, 'send_everything', {}));
  t.regex(err.message, /-32602.*unknown tool/);
});

test('401 without a key, with a Bearer of a wrong key and with another instance key; X-API-Key works too', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const inst = await d.connectedSandbox();
  const other = await d.connectedSandbox();
  const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } } };
  const post = (headers: Record<string, string>) =>
    d.request('POST', `/api/${inst.id}/mcp`, { json: initialize, headers: { accept: 'application/json, text/event-stream', ...headers } });
  for (const headers of [{}, { authorization: 'Bearer wrong-key' }, { authorization: `Bearer ${other.key}` }, { 'x-api-key': other.key }, { authorization: `Basic ${inst.key}` }] as Array<Record<string, string>>) {
    const res = await post(headers);
    t.is(res.status, 401, JSON.stringify(headers));
    t.is(res.body.success, false);
    t.is(res.body.error.code, 'UNAUTHORIZED');
  }
  // Another instance's key: REST answers the same 401.
  const restOther = await d.request('GET', `/api/${inst.id}/status`, { key: other.key });
  t.is(restOther.status, 401);
  t.is(restOther.body.error.code, 'UNAUTHORIZED');
  const ok = await post({ authorization: `bearer ${inst.key}` });
  t.is(ok.status, 200, JSON.stringify(ok.body));
  t.is(ok.body.result.serverInfo.name, 'wa-gateway');
  // The SDK client with a wrong key fails to connect; with X-API-Key it connects.
  const wrong = new Client({ name: 'gateway-test', version: '1.0.0' });
  await t.throwsAsync(wrong.connect(new StreamableHTTPClientTransport(new URL(`${d.url}/api/${inst.id}/mcp`), { requestInit: { headers: { authorization: 'Bearer nope' } } })));
  const client = await connect(d, inst.id, inst.key, 'x-api-key');
  t.teardown(() => client.close());
  t.is((await client.listTools()).tools.length, 7);
  // Bearer is only for this route: REST routes still want X-API-Key.
  t.is((await d.request('GET', `/api/${inst.id}/status`, { headers: { authorization: `Bearer ${inst.key}` } })).status, 401);
});

test('media from a URL at a private address is refused as REST refuses it, and never fetched', async (t) => {
  const d = await startTestDaemon({ config: { webhooks: { allowPrivateTargets: false } } });
  t.teardown(() => d.close());
  const files = await fileServer();
  t.teardown(() => files.server.close());
  const inst = await d.connectedSandbox({ credits: 3 });
  const client = await connect(d, inst.id, inst.key);
  t.teardown(() => client.close());
  const url = `${files.url}/secret`;
  const viaRest = await d.request('POST', `/api/${inst.id}/send-media`, { key: inst.key, json: { phone: ALICE, url } });
  t.is(viaRest.status, 400);
  t.is(viaRest.body.error.code, 'MEDIA_FETCH_FAILED');
  const viaMcp = await call(client, 'send_media', { phone: ALICE, url });
  t.deepEqual(errorOf(viaMcp), viaRest.body);
  t.regex(viaRest.body.error.message, /private/);
  t.deepEqual(files.hits, [], 'the private server got no request');
  t.is(await balance(d, inst.id), 3, 'nothing charged');
});

test('GET and DELETE answer 405 (stateless), a body over the JSON limit 413; the 200 answer matches /openapi.json', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const inst = await d.connectedSandbox();
  for (const method of ['GET', 'DELETE']) {
    const res = await d.request(method, `/api/${inst.id}/mcp`, { key: inst.key, headers: { accept: 'text/event-stream' } });
    t.is(res.status, 405, method);
    t.is(res.headers.get('allow'), 'POST');
  }
  const big = await d.request('POST', `/api/${inst.id}/mcp`, { key: inst.key, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(300_000) } }), headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } });
  t.is(big.status, 413);
  t.is(big.body.error.code, 'PAYLOAD_TOO_LARGE');
  const notJson = await d.request('POST', `/api/${inst.id}/mcp`, { key: inst.key, body: 'ping', headers: { 'content-type': 'text/plain', accept: 'application/json, text/event-stream' } });
  t.is(notJson.status, 415);
  t.is(notJson.body.error.code, 'UNSUPPORTED_MEDIA_TYPE');

  const doc = (await d.request('GET', '/openapi.json')).body as { paths: Record<string, Record<string, { security: unknown; responses: Record<string, { content?: Record<string, { schema: object }> }> }>> };
  const op = doc.paths['/api/{id}/mcp']?.post;
  t.deepEqual(op?.security, [{ ApiKey: [] }, { BearerKey: [] }]);
  const answer = await d.request('POST', `/api/${inst.id}/mcp`, {
    key: inst.key,
    json: { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'send_text', arguments: { phone: ALICE, message: 'documented' } } },
    headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
  });
  t.is(answer.status, 200, JSON.stringify(answer.body));
  t.is(answer.headers.get('content-type'), 'application/json');
  const validate = new Ajv2020({ strict: false }).compile(op!.responses['200']!.content!['application/json']!.schema);
  t.true(validate(answer.body), JSON.stringify(validate.errors));
  t.like(answer.body, { id: 7, result: { structuredContent: { success: true, to: ALICE_CHAT } } });
  // A notification alone: 202 and no body.
  const note = await d.request('POST', `/api/${inst.id}/mcp`, { key: inst.key, json: { jsonrpc: '2.0', method: 'notifications/initialized' }, headers: { accept: 'application/json, text/event-stream' } });
  t.is(note.status, 202);
  t.is(note.body, '');
});
