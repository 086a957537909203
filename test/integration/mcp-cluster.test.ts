/**
 * Guards issue 24, "AI agents (MCP)" on several hosts: an MCP POST to a node that does not run the
 * instance reaches the node that does (src/cluster/forwarding.ts passes every `/api/{id}/...`
 * request on, Authorization header and body included) and comes back as the owner answered it:
 * the SDK's Client connected to the non-owner lists the tools, sends a text that the owner's
 * sandbox sends and that is debited exactly once, and a wrong Bearer key is still 401. Two built
 * daemons (bin/gateway; build first) on one fresh PostgreSQL database.
 */
import test from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startGatewayCluster } from '../helpers/cluster.js';
import { waitFor } from '../helpers/daemon.js';

test('an MCP client on a node that does not run the instance is served by its owner, and a send is debited once', async (t) => {
  t.timeout(120_000);
  const cluster = await startGatewayCluster({ nodes: 2 });
  t.teardown(() => cluster.close());
  const { id, key, owner, other } = await cluster.sandboxWithOwner(5);

  const client = new Client({ name: 'cluster-mcp-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${cluster.nodes[other]!.url}/api/${id}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  t.teardown(() => client.close());
  t.is((await client.listTools()).tools.length, 7);
  const sent = (await client.callTool({ name: 'send_text', arguments: { phone: '+15551234567', message: 'via the other node' } })) as CallToolResult;
  t.falsy(sent.isError, JSON.stringify(sent));
  t.like(sent.structuredContent, { success: true, instanceId: id, quotaRemaining: '4' });

  // The owner's sandbox sent it, and the balance moved by one.
  const log = await cluster.request(owner, 'GET', `/api/${id}/sandbox/sent`, { key });
  t.deepEqual((log.body.messages as Array<{ messageId: string; message?: string }>).map((m) => [m.messageId, m.message]), [[sent.structuredContent?.messageId, 'via the other node']]);
  t.is((await cluster.request(other, 'GET', `/api/instances/${id}`, { secret: cluster.secret })).body.credits, 4);
  // A request's log line is written once its answer has gone out, which may be after the client read it.
  await waitFor(() => /"route":"\/api\/:id\/mcp"/.test(cluster.output(owner)), 10_000, 'the owner answered the MCP requests');
  t.notRegex(cluster.output(other), /"route":"\/api\/:id\/mcp"/, 'the other node only passed them on');

  const wrong = await cluster.request(other, 'POST', `/api/${id}/mcp`, {
    json: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    headers: { authorization: 'Bearer gw_live_wrong', accept: 'application/json, text/event-stream' },
  });
  t.is(wrong.status, 401);
  t.is(wrong.body.error.code, 'UNAUTHORIZED');
});
