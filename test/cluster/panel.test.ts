/**
 * Guards issue 23 (several hosts): the panel works on every node. A browser signed in on one node
 * is signed in on the others (its session is in the database), a write with its CSRF token works
 * through another node, and signing out on one ends it everywhere.
 */
import test from 'ava';
import { startGatewayCluster } from '../helpers/cluster.js';

test('a panel session opened on one node works on the others, and signing out ends it everywhere', async (t) => {
  t.timeout(120_000);
  const cluster = await startGatewayCluster({ leaseTtlMs: 15_000 });
  t.teardown(() => cluster.close());
  const signIn = await cluster.request(0, 'POST', '/panel/api/session', { json: { secret: cluster.secret } });
  t.is(signIn.status, 201);
  const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
  const csrf = signIn.body.csrfToken as string;
  t.is((await cluster.request(1, 'GET', '/panel/api/session', { headers: { cookie } })).status, 200, 'known on another node');
  const created = await cluster.request(2, 'POST', '/api/instances/create', { headers: { cookie, 'x-csrf-token': csrf }, json: { sandbox: true } });
  t.is(created.status, 201, 'a write with the cookie and its CSRF token through a third node');
  const id = created.body.instanceId as string;
  const status = await cluster.request(1, 'GET', `/api/${id}/status`, { headers: { cookie } });
  t.is(status.status, 200, `an instance route (forwarded to its owner) with the cookie: ${JSON.stringify(status.body)}`);
  t.is((await cluster.request(1, 'DELETE', '/panel/api/session', { headers: { cookie, 'x-csrf-token': csrf } })).status, 200);
  for (let i = 0; i < 3; i++) t.is((await cluster.request(i, 'GET', '/api/instances', { headers: { cookie } })).status, 401, `signed out on node ${i}`);
});
