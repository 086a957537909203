/**
 * Guards issue 23 (several hosts): three nodes on one PostgreSQL with WhatsApp instances through the
 * protocol double. A node killed with SIGKILL: every instance it ran is connected on the others
 * within the lease TTL, logged in from the stored auth state (no QR, no new pairing), and any node
 * answers for it (forwarded to the new owner).
 */
import test from 'ava';
import { ProtocolDouble } from '../protocol-double/server.js';
import { startGatewayCluster } from '../helpers/cluster.js';
import { waitFor } from '../helpers/daemon.js';

const INSTANCES = Number(process.env.CLUSTER_TEST_INSTANCES ?? 150);

test('kill -9 of the node running the most instances: all of them connected on the others within the lease TTL, without a QR', async (t) => {
  t.timeout(300_000);
  const double = await ProtocolDouble.start({ recordStanzas: false });
  const cluster = await startGatewayCluster({ double, leaseTtlMs: 15_000 });
  t.teardown(async () => {
    await cluster.close();
    await double.close();
  });
  const { secret } = cluster;
  // Instances created on every node; each is paired through whichever node answers (forwarded).
  const made: Array<{ id: string; key: string }> = [];
  for (let i = 0; i < INSTANCES; i++) {
    const res = await cluster.request(i % 3, 'POST', '/api/instances/create', { secret, json: { premiumDays: 30 } });
    t.is(res.status, 201, JSON.stringify(res.body));
    made.push({ id: res.body.instanceId, key: res.body.apiKey });
  }
  for (const [i, m] of made.entries()) {
    const via = (i + 1) % 3;
    const qr = await waitFor(async () => {
      const r = await cluster.request(via, 'GET', `/api/${m.id}/qr-code`, { key: m.key });
      return r.status === 200 ? (r.body.qr as string) : null;
    }, 30_000, `a QR for ${m.id}`);
    await double.scan(qr, { phone: `1888${String(i).padStart(7, '0')}`, answerMs: 60_000 });
  }
  const statusOf = async (m: { id: string; key: string }, via: number): Promise<string> => (await cluster.request(via, 'GET', `/api/${m.id}/status`, { key: m.key })).body?.status;
  await waitFor(async () => (await Promise.all(made.map((m) => statusOf(m, 0)))).every((s) => s === 'connected'), 120_000, 'all connected');
  const registrations = double.registrations().length;

  // The node running the most instances dies.
  const owners = await Promise.all(made.map((m) => cluster.ownerOf(m.id)));
  const counts = cluster.nodeIds.map((n) => owners.filter((o) => o === n).length);
  const victim = counts.indexOf(Math.max(...counts));
  const moved = made.filter((_, i) => owners[i] === cluster.nodeIds[victim]);
  t.true(moved.length > 0, `node ${victim} runs ${moved.length}`);
  const killedAt = Date.now();
  await cluster.kill9(victim);
  const survivor = (victim + 1) % 3;
  await waitFor(async () => (await Promise.all(moved.map((m) => statusOf(m, survivor)))).every((s) => s === 'connected'), 60_000, 'all moved and connected');
  const tookMs = Date.now() - killedAt;
  t.log(`${moved.length} instances connected on the other nodes ${tookMs} ms after the kill`);
  for (let i = 0; i < 3; i++) {
    if (i === victim) continue;
    for (const line of cluster.output(i).split('\n').filter((l) => l.includes('took over'))) t.log(`node${i}: +${Date.parse(JSON.parse(line).time) - killedAt} ms ${line.slice(0, 160)}`);
  }
  t.true(tookMs <= 15_000, `within the lease TTL (15 s): ${tookMs} ms`);
  t.is(double.registrations().length, registrations, 'no new pairing (no QR): they logged in from the stored auth state');
  for (const m of moved) t.not(await cluster.ownerOf(m.id, survivor), cluster.nodeIds[victim]);
});
