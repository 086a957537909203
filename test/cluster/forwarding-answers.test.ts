/**
 * Guards issue 23 (several hosts, "never a lost or double-charged send"): a request passed to the
 * node that runs its instance gets that node's answer however long the node takes while it keeps
 * the lease (here it is stopped for 12 s, longer than the old 10 s cut-off, which answered
 * INSTANCE_MOVING to a request the owner then carried out); INSTANCE_MOVING (safe to retry) only
 * when the owner was never reached (it died); OWNER_NO_ANSWER (504, look before retrying) when the
 * owner took the request and lost the lease without answering.
 */
import test from 'ava';
import { startGatewayCluster } from '../helpers/cluster.js';
import { waitFor } from '../helpers/daemon.js';

test('a slow owner that keeps its lease answers; one that loses it is 504 OWNER_NO_ANSWER; a dead one is 503 INSTANCE_MOVING', async (t) => {
  t.timeout(240_000);
  const cluster = await startGatewayCluster({ nodes: 2, leaseTtlMs: 30_000 });
  t.teardown(async () => {
    for (const n of cluster.nodes) n.kill('SIGCONT');
    await cluster.close();
  });
  const created = await cluster.request(0, 'POST', '/api/instances/create', { secret: cluster.secret, json: { sandbox: true, credits: 10 } });
  const { instanceId: id, apiKey: key } = created.body as { instanceId: string; apiKey: string };
  await waitFor(async () => (await cluster.ownerOf(id)) !== null, 30_000, 'an owner');
  const owner = cluster.nodeIds.indexOf((await cluster.ownerOf(id))!);
  const via = owner === 0 ? 1 : 0;
  t.is((await cluster.request(via, 'POST', `/api/${id}/sandbox/scan`, { key })).status, 200);
  const send = (message: string) => cluster.request(via, 'POST', `/api/${id}/send`, { key, json: { phone: '+15550002000', message } });
  const sentTexts = async (): Promise<string[]> => ((await cluster.request(via, 'GET', `/api/${id}/sandbox/sent`, { key })).body.messages as Array<{ message: string }>).map((m) => m.message);
  const credits = async (via2 = via): Promise<number> => Number((await cluster.request(via2, 'GET', `/api/instances/${id}`, { secret: cluster.secret })).body.credits);

  // 1. The owner stalls for 12 s with the request in its socket, then goes on: the client gets the 200.
  cluster.nodes[owner]!.kill('SIGSTOP');
  const slow = send('slow but answered');
  await new Promise((r) => setTimeout(r, 12_000));
  cluster.nodes[owner]!.kill('SIGCONT');
  const answered = await slow;
  t.is(answered.status, 200, JSON.stringify(answered.body));
  t.deepEqual((await sentTexts()).filter((m) => m === 'slow but answered'), ['slow but answered'], 'sent once');

  // 2. It stalls past its lease: the client hears OWNER_NO_ANSWER; the database refused the stale node, so nothing was sent.
  cluster.nodes[owner]!.kill('SIGSTOP');
  const stalled = await send('to a stalled owner');
  t.is(stalled.status, 504, JSON.stringify(stalled.body));
  t.is(stalled.body.error.code, 'OWNER_NO_ANSWER');
  cluster.nodes[owner]!.kill('SIGCONT');
  await waitFor(async () => (await cluster.request(via, 'GET', `/api/${id}/status`, { key })).body?.status === 'connected', 60_000, 'connected again');
  t.false((await sentTexts()).includes('to a stalled owner'));
  const before = await credits();

  // 3. The owner dies: the request never reaches it, INSTANCE_MOVING, and a retry once it moved is sent once.
  const now = cluster.nodeIds.indexOf((await cluster.ownerOf(id))!);
  const other = now === 0 ? 1 : 0;
  await cluster.kill9(now);
  const moving = await cluster.request(other, 'POST', `/api/${id}/send`, { key, json: { phone: '+15550002000', message: 'retried' } });
  if (moving.status !== 200) {
    t.is(moving.status, 503, JSON.stringify(moving.body));
    t.is(moving.body.error.code, 'INSTANCE_MOVING');
    await waitFor(async () => (await cluster.request(other, 'POST', `/api/${id}/send`, { key, json: { phone: '+15550002000', message: 'retried' } })).status === 200, 90_000, 'sent on the node it moved to');
  }
  t.is(await credits(other), before - 1, 'charged once');
});
