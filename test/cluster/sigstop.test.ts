/**
 * Guards issue 23 (several hosts): a node stopped with SIGSTOP past its lease. The others take its
 * instances over (log in from the stored auth state); when it continues (SIGCONT) it closes its own
 * WhatsApp sockets at once (it could not renew: self-fencing), writes nothing stale (the database
 * refuses a node without the lease), and rejoins the gateway.
 */
import test from 'ava';
import pg from 'pg';
import { ProtocolDouble } from '../protocol-double/server.js';
import { startGatewayCluster } from '../helpers/cluster.js';
import { waitFor } from '../helpers/daemon.js';

test('SIGSTOP past the lease: taken over elsewhere; after SIGCONT its sockets close, it writes nothing stale and rejoins', async (t) => {
  t.timeout(240_000);
  const double = await ProtocolDouble.start({ recordStanzas: false });
  const ttl = 6_000;
  const cluster = await startGatewayCluster({ double, leaseTtlMs: ttl });
  t.teardown(async () => {
    for (const n of cluster.nodes) n.kill('SIGCONT');
    await cluster.close();
    await double.close();
  });
  const { secret } = cluster;
  const made: Array<{ id: string; key: string }> = [];
  for (let i = 0; i < 9; i++) {
    const res = await cluster.request(i % 3, 'POST', '/api/instances/create', { secret, json: { premiumDays: 30 } });
    made.push({ id: res.body.instanceId, key: res.body.apiKey });
  }
  for (const [i, m] of made.entries()) {
    const qr = await waitFor(async () => {
      const r = await cluster.request(0, 'GET', `/api/${m.id}/qr-code`, { key: m.key });
      return r.status === 200 ? (r.body.qr as string) : null;
    }, 30_000, 'a QR');
    await double.scan(qr, { phone: `1777${String(i).padStart(7, '0')}`, answerMs: 60_000 });
  }
  const statusOf = async (m: { id: string; key: string }, via: number): Promise<string> => (await cluster.request(via, 'GET', `/api/${m.id}/status`, { key: m.key }).catch(() => ({ body: {} as { status?: string } }))).body?.status ?? '';
  await waitFor(async () => (await Promise.all(made.map((m) => statusOf(m, 0)))).every((s) => s === 'connected'), 90_000, 'all connected');
  const owners = await Promise.all(made.map((m) => cluster.ownerOf(m.id)));
  const stopped = 1;
  const moved = made.filter((_, i) => owners[i] === cluster.nodeIds[stopped]);
  t.true(moved.length > 0);
  const liveBefore = double.live().length;

  cluster.nodes[stopped]!.kill('SIGSTOP');
  const survivor = 0;
  await waitFor(async () => (await Promise.all(moved.map((m) => cluster.ownerOf(m.id, survivor)))).every((o) => o !== null && o !== cluster.nodeIds[stopped]), 60_000, 'taken over');
  await waitFor(async () => (await Promise.all(moved.map((m) => statusOf(m, survivor)))).every((s) => s === 'connected'), 60_000, 'connected on the others');
  // The stopped node's sockets are still open at the TCP level (its process cannot close them).
  t.true(double.live().length > liveBefore - 1, 'the stopped node still holds its sockets');
  // The new owner writes the auth state under its own lease epoch (migration 009): a send to a
  // new contact makes a Signal session, which must reach the database (a refused epoch keeps it out).
  const db = new pg.Client({ connectionString: cluster.db.url });
  await db.connect();
  const sessions = async (): Promise<string[]> => {
    const data = (await db.query<{ data: string }>(`SELECT data FROM auth_keys WHERE instance_id = $1 AND type = 'session'`, [moved[0]!.id])).rows[0]?.data;
    return data ? Object.keys(JSON.parse(data) as Record<string, unknown>) : [];
  };
  try {
    const before = await sessions();
    const contact = await double.contact('+15550009901', { name: 'Epoch' });
    const sent = await cluster.request(survivor, 'POST', `/api/${moved[0]!.id}/send`, { key: moved[0]!.key, json: { phone: contact.phone, message: 'after the take-over' } });
    t.is(sent.status, 200, JSON.stringify(sent.body));
    const got = (await contact.nextMessage(20_000)).message;
    t.is(got.conversation ?? got.extendedTextMessage?.text, 'after the take-over');
    await waitFor(async () => (await sessions()).some((k) => !before.includes(k)), 10_000, 'the session with the new contact stored');
  } finally {
    await db.end();
  }
  for (const i of cluster.nodes.keys()) if (i !== stopped) t.notRegex(cluster.output(i), /saving credentials failed|stale lease/, `node ${i} stores its auth state`);

  const continuedAt = Date.now();
  cluster.nodes[stopped]!.kill('SIGCONT');
  // It fences itself at once: the sockets it held close, and it does not take them back.
  await waitFor(() => double.live().length === made.length, 20_000, 'one live session per instance again');
  t.log(`the continued node closed its sockets ${Date.now() - continuedAt} ms after SIGCONT`);
  // The double may close the stale sockets itself (a newer login of the same device replaces them), so
  // the node's own account of fencing can come a moment later than the count above.
  const fenced = /leases not renewed for half their TTL: closing every WhatsApp socket|lease lost to another node/;
  await waitFor(() => fenced.test(cluster.output(stopped)), 20_000, 'the continued node says it fenced itself');
  t.regex(cluster.output(stopped), fenced);
  // It rejoins: it renews again and is listed, and the gateway keeps working through it.
  await waitFor(async () => ((await cluster.request(stopped, 'GET', '/api/cluster', { secret })).body?.nodes ?? []).some((n: { nodeId: string }) => n.nodeId === cluster.nodeIds[stopped]), 30_000, 'rejoined');
  // Once it is live again the others hand it its fair share back (a few a tick), so an instance may
  // be logging in there while this runs ('initializing': CI saw it once); each settles connected,
  // asked through either node, and the stale sockets never come back (one live session each).
  const allConnected = async (via: number): Promise<boolean> => (await Promise.all(made.map((m) => statusOf(m, via)))).every((s) => s === 'connected');
  await waitFor(() => allConnected(stopped), 60_000, 'every instance connected, served through the node that continued');
  await waitFor(() => allConnected(survivor), 60_000, 'every instance connected, served through a node that never stopped');
  await waitFor(() => double.live().length === made.length, 20_000, 'one live session per instance after the rebalance');
  const after = await Promise.all(made.map((m) => cluster.ownerOf(m.id)));
  t.log(`after the rebalance the continued node owns ${after.filter((o) => o === cluster.nodeIds[stopped]).length} of ${made.length}`);
});
