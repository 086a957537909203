import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import Type from 'typebox';
import type { Feature } from '../features/feature.js';
import { defineRoute } from '../http/route.js';
import { setBody } from '../http/response-body.js';
import { messageReads, type MessageReadParts } from '../messages/reads.js';
import { gatewayTools, type GatewayTool, type ToolParts } from './tools.js';

/** What the MCP server is built from: the parts its tools act through, as the REST routes do. */
export interface McpParts extends MessageReadParts {
  config: ToolParts['config'];
  sender: ToolParts['sender'];
  /** The chats a person took over (list_chats shows them, as GET /chats does). */
  openHandovers(instanceId: string): Promise<ReadonlySet<string>>;
  logger: Logger;
}

const JsonRpcId = Type.Union([Type.String(), Type.Integer()]);
const JsonRpcMessage = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    id: Type.Optional(JsonRpcId),
    method: Type.Optional(Type.String({ description: 'initialize, notifications/initialized, tools/list, tools/call, ping.' })),
    params: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: true, description: 'A JSON-RPC 2.0 message of the Model Context Protocol.' },
);
const JsonRpcAnswer = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    id: Type.Union([JsonRpcId, Type.Null()]),
    result: Type.Optional(Type.Object({}, { additionalProperties: true })),
    error: Type.Optional(Type.Object({ code: Type.Integer(), message: Type.String(), data: Type.Optional(Type.Unknown()) }, { additionalProperties: false })),
  },
  { additionalProperties: false, description: 'A JSON-RPC 2.0 answer: `result`, or `error` for a protocol error (a failed tool is a result with isError).' },
);
const McpBody = Type.Union([JsonRpcMessage, Type.Array(JsonRpcMessage, { minItems: 1, maxItems: 100 })]);
const McpAnswer = Type.Union([JsonRpcAnswer, Type.Array(JsonRpcAnswer)]);

const SENT = { success: true, instanceId: 'inst_k3J9xQ2mVb7n', messageId: '3EB0C767F26D4C4A5B8A', to: '15551234567@s.whatsapp.net', quotaRemaining: '41' };

/** `/api/{id}/mcp` of any case, with one trailing slash, as the router matches it. */
const MCP_PATH = /^\/api\/[^/]+\/mcp\/?$/i;

/**
 * GET (a server-sent stream) and DELETE (a session's end) are what a stateful MCP server offers;
 * this one is stateless, and the Streamable HTTP spec has it answer 405 for them, which MCP
 * clients take as "POST only". Answered before routing: the router would call them unknown (404).
 */
const postOnly: Middleware = async (ctx, next) => {
  if (ctx.method === 'POST' || !MCP_PATH.test(ctx.path)) return next();
  ctx.status = 405;
  ctx.set('Allow', 'POST');
  setBody(ctx, { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP server is stateless; send every message with POST' }, id: null });
  return undefined;
};

/**
 * AI agents: `/api/{id}/mcp`, a Model Context Protocol server for one instance (Streamable HTTP,
 * stateless), authenticated with the instance key (X-API-Key or `Authorization: Bearer`). Its
 * tools call the same services as the REST routes they stand for, so credits, pacing and errors
 * are the same.
 */
export function mcpFeature(parts: McpParts): Feature {
  const tools: readonly GatewayTool[] = gatewayTools({ config: parts.config, sender: parts.sender, reads: messageReads(parts, parts.openHandovers) });
  return {
    name: 'mcp',
    before: [postOnly],
    routes: [
      defineRoute({
        method: 'POST',
        path: '/api/:id/mcp',
        auth: 'instance',
        bearer: true,
        operationId: 'mcp',
        summary: 'The Model Context Protocol server of this instance, for AI agents (not a JSON REST route)',
        description:
          'An MCP server over Streamable HTTP (stateless: no Mcp-Session-Id, every message a POST of JSON-RPC 2.0; GET and DELETE answer 405). ' +
          'Point an MCP client at this URL with the instance key as `Authorization: Bearer KEY` (or X-API-Key). The client sends `Accept: application/json, text/event-stream`; ' +
          'every answer is one JSON document (202 with no body for notifications alone), never a stream. ' +
          `Tools: ${tools.map((t) => `\`${t.name}\``).join(', ')}; tools/list gives their input and output schemas (the REST routes' own). ` +
          'A tool does what its REST route does, with the same credits, pacing and errors: a failed call is a result with `isError: true` whose text is the REST error body. ' +
          'Errors before the protocol (key, body size, content type) are the usual error bodies below; a malformed JSON-RPC message or a missing Accept is a JSON-RPC error answer (400, 406).',
        tags: ['agents'],
        body: McpBody,
        parse: (raw) => raw as never,
        example: { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'send_text', arguments: { phone: '+15551234567', message: 'Hello!' } } },
        response: {
          description: 'The JSON-RPC answer.',
          schema: McpAnswer,
          example: { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: JSON.stringify(SENT) }], structuredContent: SENT } },
        },
        async handle({ koa, instance, body }) {
          const { answerMcp } = await import('./protocol.js');
          await answerMcp(koa, instance.id, body, tools, parts.logger);
          return undefined;
        },
      }),
    ],
  };
}
