// The only module that imports the MCP SDK; the route loads it on its first request (the CLI and a
// daemon nobody asks over MCP never load the SDK and its dependencies).
import { readFileSync } from 'node:fs';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { GatewayError } from '../domain/errors.js';
import { errorBody } from '../http/error-middleware.js';
import type { GatewayTool } from './tools.js';

const INSTRUCTIONS =
  'A WhatsApp account, through a self-hosted gateway. Phones are E.164 (+15551234567); chats are ids such as 15551234567@s.whatsapp.net or 120363041234567890@g.us. ' +
  'Sends cost one credit each on a non-premium instance and wait their turn in the anti-ban pacing; reads and lookups are free. ' +
  'A failed tool answers isError with the REST error body {"success": false, "error": {"code", "message"}}: match on the code.';

function packageVersion(): string {
  try {
    // src/mcp, dist/mcp and the bundle's chunks are all two levels below the package root.
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

const VERSION = packageVersion();
/** Used only for elicitation (which these tools never ask); one for the process instead of a new Ajv per request. */
const validator = new AjvJsonSchemaValidator();

/** A schema as the plain JSON MCP lists (TypeBox schemas are JSON Schema). */
function plain(schema: unknown): Tool['inputSchema'] {
  return JSON.parse(JSON.stringify(schema)) as Tool['inputSchema'];
}

/** tools/list: the same for every instance, built once per set of tools. */
const listed = new WeakMap<readonly GatewayTool[], Tool[]>();
function toolList(tools: readonly GatewayTool[]): Tool[] {
  let list = listed.get(tools);
  if (!list) {
    list = tools.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: plain(t.input),
      outputSchema: plain(t.output),
      annotations: { title: t.title, readOnlyHint: t.readOnly, ...(t.readOnly ? {} : { destructiveHint: false, idempotentHint: false }), openWorldHint: t.openWorld },
    }));
    listed.set(tools, list);
  }
  return list;
}

/** A failure as a tool result: the REST error body, so an agent reads the same code and message as an integrator. */
function toolError(err: unknown, tool: string, instanceId: string, logger: Logger): CallToolResult {
  const known = err instanceof GatewayError ? err : new GatewayError('INTERNAL', 'internal error', { cause: err });
  if (!known.expose) logger.error({ err, tool, instanceId }, 'MCP tool failed');
  const content: CallToolResult['content'] = [{ type: 'text', text: JSON.stringify(errorBody(known, false)) }];
  // REST says this in its Retry-After header.
  if (known.retryAfter !== undefined) content.push({ type: 'text', text: `Retry after ${known.retryAfter} s.` });
  return { isError: true, content };
}

/** The MCP server of one instance for one request (stateless: nothing outlives the answer). */
function serverFor(instanceId: string, tools: readonly GatewayTool[], logger: Logger): Server {
  // The low-level Server rather than McpServer: McpServer takes zod schemas and checks arguments
  // itself, while these tools list the REST routes' own TypeBox schemas and check with them, so a
  // bad argument gets the same code and message as the REST route.
  const server = new Server({ name: 'wa-gateway', title: 'WhatsApp gateway', version: VERSION }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS, jsonSchemaValidator: validator });
  const byName = new Map(tools.map((t) => [t.name, t]));
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: toolList(tools) }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool ${JSON.stringify(request.params.name.slice(0, 60))}; tools/list names them`);
    try {
      const out = await tool.run(instanceId, request.params.arguments ?? {});
      return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out };
    } catch (err) {
      return toolError(err, tool.name, instanceId, logger);
    }
  });
  return server;
}

/** Headers the transport reads; keys and cookies stay out of the SDK. */
const PASSED = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'];

/**
 * Answers one MCP POST whose JSON body the app already read (bounded, as every JSON route) and the
 * instance it authenticated: a Streamable HTTP transport in stateless, JSON-answer mode, so each
 * answer is one JSON document (202 and no body for notifications), never a held-open stream.
 */
export async function answerMcp(koa: Context, instanceId: string, body: unknown, tools: readonly GatewayTool[], logger: Logger): Promise<void> {
  const headers = new Headers();
  for (const name of PASSED) {
    const value = koa.get(name);
    if (value !== '') headers.set(name, value);
  }
  const request = new Request(new URL(koa.originalUrl, 'http://gateway.invalid'), { method: 'POST', headers });
  const server = serverFor(instanceId, tools, logger);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  try {
    await server.connect(transport);
    const response = await transport.handleRequest(request, { parsedBody: body });
    const text = await response.text();
    response.headers.forEach((value, name) => {
      if (name !== 'content-length') koa.set(name, value);
    });
    // The body before the status: Koa turns a null body set after a 202 into a 204.
    koa.body = text === '' ? null : text;
    koa.status = response.status;
  } finally {
    await server.close();
  }
}
