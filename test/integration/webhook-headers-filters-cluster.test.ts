/**
 * Guards issue 24, "Webhooks, part 3", on several hosts (PostgreSQL, built daemons as child
 * processes: `npm run build` first): the headers and filters set through one node are what the
 * node that runs the instance uses (they live in the shared instance record); a rotation through
 * yet another node applies to the next attempt; and no node's log output (stdout and stderr, at
 * debug) ever carries a header value.
 */
import test from 'ava';
import { startGatewayCluster } from '../helpers/cluster.js';
import { waitFor } from '../helpers/daemon.js';
import { startReceiver } from '../helpers/receiver.js';

const FIRST = 'Bearer tok_cluster_first_4b227777d4dd1fc6';
const SECOND = 'Bearer tok_cluster_second_ef2d127de37b942b';

test('headers and filters set on any node are used by the owner; no node logs a header value', async (t) => {
  t.timeout(120_000);
  const receiver = await startReceiver();
  const cluster = await startGatewayCluster({ nodes: 2, config: { logLevel: 'debug' } });
  t.teardown(async () => {
    await cluster.close();
    await receiver.close();
  });
  const created = await cluster.request(0, 'POST', '/api/instances/create', {
    secret: cluster.secret,
    json: { sandbox: true, premiumDays: 30, webhookUrl: receiver.url, webhookEvents: ['message.received'], webhookHeaders: { Authorization: FIRST }, webhookFilters: { ignoreGroups: true } },
  });
  t.is(created.status, 201, JSON.stringify(created.body));
  t.deepEqual(created.body.webhook.headers, ['Authorization']);
  const id = created.body.instanceId as string;
  const key = created.body.apiKey as string;
  t.is((await cluster.request(1, 'POST', `/api/${id}/sandbox/scan`, { key })).status, 200);
  const owner = await waitFor(() => cluster.ownerOf(id), 20_000, 'an owner');
  const other = cluster.nodeIds[0] === owner ? 1 : 0;

  const inbound = (via: number, json: Record<string, string>) => cluster.request(via, 'POST', `/api/${id}/sandbox/inbound`, { key, json });
  t.is((await inbound(other, { from: '+15551230001', message: 'group', chatId: '120363041234567890@g.us' })).status, 200);
  t.is((await inbound(other, { from: '+15551230001', message: 'first' })).status, 200);
  const [first] = await receiver.waitForCount(1, 20_000);
  t.is(first!.json.data.text, 'first', 'the group message was filtered out by the owner');
  t.is(first!.headers.authorization, FIRST);

  const rotated = await cluster.request(other, 'PUT', `/api/${id}/webhook`, { key, json: { headers: { Authorization: SECOND } } });
  t.is(rotated.status, 200, JSON.stringify(rotated.body));
  const shown = await cluster.request(1 - other, 'GET', `/api/${id}/webhook`, { key });
  t.deepEqual(shown.body.webhook.headers, ['Authorization']);
  t.false(JSON.stringify(shown.body).includes('tok_cluster'));
  t.is((await inbound(1 - other, { from: '+15551230001', message: 'second' })).status, 200);
  await receiver.waitForCount(2, 20_000);
  t.is(receiver.requests[1]!.json.data.text, 'second');
  t.is(receiver.requests[1]!.headers.authorization, SECOND, 'the rotated header, through the other node');

  // Log lines are written in batches (at most 250 ms old): wait for both deliveries' lines.
  const all = () => [0, 1].map((i) => cluster.output(i)).join('\n');
  const logs = await waitFor(() => (all().split('"msg":"webhook delivered"').length > 2 ? all() : null), 5_000, 'both deliveries logged (debug)');
  for (const value of ['tok_cluster_first_4b227777d4dd1fc6', 'tok_cluster_second_ef2d127de37b942b']) t.false(logs.includes(value), `no node logs ${value}`);
});
