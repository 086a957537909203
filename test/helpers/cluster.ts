/**
 * Several nodes of one gateway on PostgreSQL, each a built daemon (`bin/gateway start`, a child
 * process: run `npm run build` first) with a small data dir of its own, all on one fresh database;
 * WhatsApp through the protocol double when one is given.
 */
import { rm } from 'node:fs/promises';
import { initDatabase } from '../../src/cluster/init-database.js';
import { loadConfig, saveConfig } from '../../src/config/load.js';
import { UNGUARDED } from '../../src/fs/write-guard.js';
import { childPreloadEnv } from '../protocol-double/index.js';
import { mediaTrustEnv } from '../protocol-double/media.js';
import type { ProtocolDouble } from '../protocol-double/server.js';
import { FAST_BAILEYS } from '../protocol-double/harness.js';
import { startChildDaemon, type ChildDaemon } from './child-daemon.js';
import { prepareDataDir, request, tempDir, waitFor, type ApiResponse, type ConfigPatch, type RequestOptions } from './daemon.js';
import { freshDatabase, type TestDatabase } from './postgres.js';

export interface GatewayCluster {
  db: TestDatabase;
  /** The gateway's server secret (X-API-Secret), the same on every node. */
  secret: string;
  nodes: ChildDaemon[];
  nodeIds: string[];
  dataDirs: string[];
  /** A request to node `i`. */
  request(i: number, method: string, path: string, options?: RequestOptions): Promise<ApiResponse>;
  /** Which node runs the instance now (admin view), or null. */
  ownerOf(instanceId: string, via?: number): Promise<string | null>;
  /** A connected sandbox instance with `credits`, created through node 0, and which of two nodes runs it (`owner`) and which does not (`other`). */
  sandboxWithOwner(credits: number): Promise<{ id: string; key: string; owner: number; other: number }>;
  kill9(i: number): Promise<void>;
  /** Starts node `i` again on its data dir. */
  restart(i: number): Promise<void>;
  /** Output of node `i` (every run of it). */
  output(i: number): string;
  close(): Promise<void>;
}

export async function startGatewayCluster(options: { nodes?: number; double?: ProtocolDouble; config?: ConfigPatch; leaseTtlMs?: number; serverUrl?: string } = {}): Promise<GatewayCluster> {
  const count = options.nodes ?? 3;
  const db = await freshDatabase(options.serverUrl);
  const dataDirs: string[] = [];
  const nodeIds: string[] = [];
  const nodes: ChildDaemon[] = [];
  const earlier: string[][] = [];
  const env = options.double ? { ...childPreloadEnv(), ...mediaTrustEnv(options.double.media.hostname) } : {};
  try {
    const base: ConfigPatch = {
      webhooks: { allowPrivateTargets: true },
      sending: { minIntervalMs: 0, jitterMs: 0 },
      ...options.config,
      ...(options.double ? { baileys: { ...FAST_BAILEYS, ...options.config?.baileys, webSocketUrl: options.double.url } } : {}),
    };
    let secret = '';
    let clusterSecret: string | null = null;
    for (let i = 0; i < count; i++) {
      const dir = await tempDir(`gw-node${i}-`);
      await prepareDataDir(dir, base);
      const config = loadConfig(dir);
      const joined = await initDatabase(db.url, { clusterSecret, settings: { plans: config.plans, webhooks: config.webhooks } });
      if (joined.created) secret = joined.serverSecret;
      clusterSecret = joined.clusterSecret;
      const nodeId = `node${i}`;
      await saveConfig(
        dir,
        {
          ...config,
          serverSecretHash: null,
          retiringServerSecretHash: null,
          storage: { postgres: { url: db.url } },
          cluster: { ...config.cluster, nodeId, secret: joined.clusterSecret, ...(options.leaseTtlMs ? { leaseTtlMs: options.leaseTtlMs } : {}) },
        },
        UNGUARDED,
      );
      dataDirs.push(dir);
      nodeIds.push(nodeId);
      earlier.push([]);
    }
    for (const dir of dataDirs) nodes.push(await startChildDaemon(dir, [], env));
    const self: GatewayCluster = {
      db,
      secret,
      nodes,
      nodeIds,
      dataDirs,
      request: (i, method, path, o = {}) => request(nodes[i]!.url, method, path, o),
      async ownerOf(id, via = 0) {
        const res = await request(nodes[via]!.url, 'GET', `/api/instances/${id}`, { secret });
        return (res.body?.node as string | null | undefined) ?? null;
      },
      async sandboxWithOwner(credits) {
        const created = await request(nodes[0]!.url, 'POST', '/api/instances/create', { secret, json: { sandbox: true, credits } });
        if (created.status !== 201) throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
        const { instanceId: id, apiKey: key } = created.body as { instanceId: string; apiKey: string };
        const scan = await request(nodes[0]!.url, 'POST', `/api/${id}/sandbox/scan`, { key });
        if (scan.status !== 200) throw new Error(`scan: ${scan.status}`);
        const owner = nodeIds.indexOf((await self.ownerOf(id)) ?? '');
        if (owner === -1) throw new Error(`no node runs ${id}`);
        return { id, key, owner, other: 1 - owner };
      },
      async kill9(i) {
        nodes[i]!.kill('SIGKILL');
        await nodes[i]!.exited;
      },
      async restart(i) {
        earlier[i]!.push(`${nodes[i]!.stdout()}\n${nodes[i]!.stderr()}`);
        nodes[i] = await startChildDaemon(dataDirs[i]!, [], env);
      },
      output: (i) => [...earlier[i]!, `${nodes[i]!.stdout()}\n${nodes[i]!.stderr()}`].join('\n--- restart ---\n'),
      async close() {
        for (const n of nodes) {
          n.kill('SIGKILL');
          await n.exited;
        }
        for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
        await db.drop();
      },
    };
    // Every node registered (its first lease tick ran).
    await waitFor(async () => ((await self.request(0, 'GET', '/api/cluster', { secret })).body?.nodes?.length ?? 0) === count, 20_000, `${count} nodes`);
    return self;
  } catch (err) {
    for (const n of nodes) n.kill('SIGKILL');
    await db.drop().catch(() => undefined);
    throw err;
  }
}
