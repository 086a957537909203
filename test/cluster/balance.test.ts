/**
 * Guards issue 23 item 2 ("nodes and leases"): a clean stop hands a node's instances over at once
 * (the others take them at their next lease tick, long before the lease would have expired), and a
 * node that joins (again) gets its fair share back from the node that held everything, so the
 * instances end spread evenly. Two built daemons (bin/gateway; build first) on one fresh PostgreSQL
 * database, a lease TTL of 15 s (a tick every 3 s); sandbox instances.
 */
import test from 'ava';
import { startGatewayCluster, type GatewayCluster } from '../helpers/cluster.js';
import { waitFor } from '../helpers/daemon.js';

const TTL_MS = 15_000;

async function owners(cluster: GatewayCluster, ids: readonly string[], via: number): Promise<Map<string, number>> {
  const count = new Map<string, number>();
  for (const id of ids) {
    const node = await cluster.ownerOf(id, via);
    const key = node ?? 'none';
    count.set(key, (count.get(key) ?? 0) + 1);
  }
  return count;
}

test('a clean stop hands its instances over within a tick, and a node that rejoins gets its fair share back', async (t) => {
  t.timeout(120_000);
  const cluster = await startGatewayCluster({ nodes: 2, leaseTtlMs: TTL_MS });
  t.teardown(() => cluster.close());
  const ids: string[] = [];
  for (let i = 0; i < 8; i++) {
    const created = await cluster.request(i % 2, 'POST', '/api/instances/create', { secret: cluster.secret, json: { sandbox: true, credits: 1 } });
    t.is(created.status, 201, JSON.stringify(created.body));
    ids.push((created.body as { instanceId: string }).instanceId);
  }
  const [a, b] = cluster.nodeIds as [string, string];
  // Both nodes hold a share (4 each, one more on either side while a hand-over is under way).
  await waitFor(async () => {
    const o = await owners(cluster, ids, 0);
    return (o.get(a) ?? 0) >= 3 && (o.get(b) ?? 0) >= 3;
  }, 30_000, 'both nodes hold a share');

  // A clean stop: SIGTERM, as systemd stops it. Its leases are released, not left to expire.
  const stoppedAt = Date.now();
  cluster.nodes[1]!.kill('SIGTERM');
  await cluster.nodes[1]!.exited;
  await waitFor(async () => (await owners(cluster, ids, 0)).get(a) === ids.length, TTL_MS, 'node 0 runs every instance');
  const tookMs = Date.now() - stoppedAt;
  t.log(`handed over in ${tookMs} ms after SIGTERM (lease TTL ${TTL_MS} ms)`);
  t.true(tookMs < TTL_MS / 2, `taken over at once, not when the lease expired (${tookMs} ms)`);

  // The node joins again: the one holding everything hands over the excess until both hold 4.
  await cluster.restart(1);
  await waitFor(async () => {
    const o = await owners(cluster, ids, 0);
    return o.get(a) === 4 && o.get(b) === 4;
  }, 30_000, 'four on each node again');
  t.pass();
});
