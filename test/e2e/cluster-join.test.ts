/**
 * Guards issue 23 item 3 ("joining"): a node joins the gateway a database holds only with that
 * gateway's cluster secret. `gateway init --database` without one, or with a wrong one, exits 1
 * naming why and leaves the data dir as it was (no config written, the database's gateway
 * untouched); the right one joins. And a request that claims to come from another node with a
 * wrong cluster secret is 401, never served. The built CLI (bin/gateway; build first) on a fresh
 * PostgreSQL database.
 */
import test from 'ava';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { FORWARDED_HEADER } from '../../src/cluster/forwarding.js';
import { startGatewayCluster } from '../helpers/cluster.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/daemon.js';
import { freshDatabase } from '../helpers/postgres.js';

async function gatewayRows(url: string): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query('SELECT cluster_secret_hash, server_secret_hash FROM gateway')).rows;
  } finally {
    await client.end();
  }
}

test('a node joins only with the cluster secret; none or a wrong one exits 1 naming why and writes nothing', async (t) => {
  t.timeout(60_000);
  const db = await freshDatabase();
  const first = await tempDir('gw-join-a-');
  const second = await tempDir('gw-join-b-');
  t.teardown(async () => {
    await rm(first, { recursive: true, force: true });
    await rm(second, { recursive: true, force: true });
    await db.drop();
  });

  const created = await runCli(['init', '--yes', '--json', '--database', db.url], { dataDir: first });
  t.is(created.code, 0, created.stderr);
  const { clusterSecret } = JSON.parse(created.stdout) as { clusterSecret: string };
  t.regex(clusterSecret, /^gw_cluster_/);
  const before = await gatewayRows(db.url);

  const none = await runCli(['init', '--yes', '--database', db.url], { dataDir: second });
  t.is(none.code, 1, none.stderr);
  t.regex(none.stderr, /already holds a gateway: join it with --cluster-secret/);
  t.false(existsSync(join(second, 'config.json')), 'nothing written without the secret');

  const wrong = await runCli(['init', '--yes', '--json', '--database', db.url, '--cluster-secret', `${clusterSecret.slice(0, -2)}xx`], { dataDir: second });
  t.is(wrong.code, 1, wrong.stderr);
  t.like(JSON.parse(wrong.stdout), { success: false, error: { code: 'UNAUTHORIZED' } });
  t.regex(wrong.stderr, /the cluster secret is not this gateway's/);
  t.notRegex(wrong.stderr + wrong.stdout, new RegExp(clusterSecret), 'the secret is never echoed');
  t.false(existsSync(join(second, 'config.json')), 'nothing written with a wrong secret');
  t.deepEqual(await gatewayRows(db.url), before, 'the gateway record is untouched');

  const right = await runCli(['init', '--yes', '--json', '--database', db.url, '--cluster-secret', clusterSecret], { dataDir: second });
  t.is(right.code, 0, right.stderr);
  t.like(JSON.parse(right.stdout), { joined: true });
  t.true(existsSync(join(second, 'config.json')));
});

test('a request that claims to come from another node with a wrong cluster secret is 401 and not served', async (t) => {
  t.timeout(60_000);
  const cluster = await startGatewayCluster({ nodes: 1 });
  t.teardown(() => cluster.close());
  const forged = await cluster.request(0, 'POST', '/api/instances/create', {
    secret: cluster.secret,
    json: { sandbox: true, credits: 5 },
    headers: { [FORWARDED_HEADER]: 'gw_cluster_not-the-secret' },
  });
  t.is(forged.status, 401, JSON.stringify(forged.body));
  t.is(forged.body.error.code, 'UNAUTHORIZED');
  const list = await cluster.request(0, 'GET', '/api/instances', { secret: cluster.secret });
  t.is(list.status, 200);
  t.deepEqual(list.body.instances, [], 'nothing was created');
});
