/**
 * Several hosts on PostgreSQL (issue 23), in the same run as the files-engine figures:
 *
 * - `pg_send_vs_koa`: debited sandbox sends/s of ONE node on PostgreSQL (50 connections) against
 *   the Koa baseline taken right before and right after that send run, averaged (as `send_vs_koa`,
 *   bench/run.ts `bracketed`); `pg_send_p99_ms`, `pg_koa_spread_pct` (how far the two baselines
 *   are apart). In a full `npm run bench` the run's first baseline was taken up to an hour before
 *   this one, before the sessions bench: on a shared machine it moved the ratio more than the
 *   send path did (base build, five runs alone, one baseline first: 0.24 to 0.37).
 * - `pg_webhook_eps`: a burst of 2,000 inbound events delivered by one node on PostgreSQL, measured
 *   as the files engine's `webhook_eps` (bench/measure.ts webhookBurst: load and signed receiver in
 *   their own processes, from the client's first accepted call to the last receipt).
 * - `failover_s`, `failover_lost`, `failover_sessions`: three nodes, each running about
 *   BENCH_FAILOVER_SESSIONS (100) real WhatsApp sessions (Baileys against the protocol double);
 *   one is killed with SIGKILL and the seconds until every one of its sessions is connected on the
 *   others are measured; meanwhile a sandbox instance it ran takes inbound events, and the ones
 *   answered 200 but never delivered are `failover_lost`.
 * - `pg_sessions_mb_each`: RSS of a node with its sessions connected, minus the same node empty,
 *   divided by its sessions.
 *
 * The database: BENCH_DATABASE_URL (a server; a database is created on it), else 127.0.0.1:5432.
 * Run alone: `npm run build && BENCH_ONLY=cluster node --import=tsx bench/run.ts` (BENCH_ONLY=pg: the one
 * node's sends and webhooks only, with the Koa baseline; BENCH_NODE_ARGS reaches that node).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { childPreloadEnv } from '../test/protocol-double/index.js';
import { mediaTrustEnv } from '../test/protocol-double/media.js';
import { ProtocolDouble } from '../test/protocol-double/server.js';
import { rssMb, startDaemon, startGateway, startReceiver, type DaemonProc } from './lib.js';
import { CHATS, sendLoad, webhookBurst } from './measure.js';

export interface ClusterResult {
  pg_send_rps: number;
  pg_send_vs_koa: number;
  pg_koa_spread_pct: number;
  pg_send_p99_ms: number;
  pg_webhook_eps: number;
  failover_s: number;
  failover_lost: number;
  failover_sessions: number;
  pg_sessions_mb_each: number;
}

async function createDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const server = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `gwbench_${randomBytes(5).toString('hex')}`;
  const admin = async (sql: string): Promise<void> => {
    const c = new pg.Client({ connectionString: server });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const u = new URL(server);
  u.pathname = `/${name}`;
  return { url: u.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

function cli(bin: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`gateway ${args.join(' ')} exited ${code}`))));
  });
}

/** Node data dirs joined to one new gateway in `url`; returns the server secret. */
async function initNodes(bin: string, url: string, count: number, patch: (config: Record<string, any>) => void): Promise<{ dirs: string[]; secret: string }> { // eslint-disable-line @typescript-eslint/no-explicit-any -- config JSON
  const dirs: string[] = [];
  let secret = '';
  let clusterSecret = '';
  for (let i = 0; i < count; i++) {
    const dir = await mkdtemp(join(tmpdir(), `gw-bench-node${i}-`));
    const args = ['--data-dir', dir, 'init', '--yes', '--json', '--allow-private-webhooks', '--database', url, '--node-id', `bench${i}`, ...(i > 0 ? ['--cluster-secret', clusterSecret] : [])];
    const out = JSON.parse(await cli(bin, args)) as { serverSecret?: string; clusterSecret?: string };
    if (i === 0) {
      secret = out.serverSecret!;
      clusterSecret = out.clusterSecret!;
    }
    const file = join(dir, 'config.json');
    const config = JSON.parse(await readFile(file, 'utf8'));
    patch(config);
    await writeFile(file, JSON.stringify(config, null, 2));
    dirs.push(dir);
  }
  return { dirs, secret };
}

async function api(port: number, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any -- read field by field
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { method, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
  return { status: res.status, body: await res.json().catch(() => null) };
}

async function until(check: () => Promise<boolean> | boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** One node on PostgreSQL: debited sends, then a webhook burst. */
/** The Koa baseline's req/s, measured when called (bench/run.ts koaBaseline). */
export type KoaBaseline = () => Promise<number>;

export async function oneNode(bin: string, log: (l: string) => void, koaBaseline: KoaBaseline, seconds: number): Promise<Pick<ClusterResult, 'pg_send_rps' | 'pg_send_vs_koa' | 'pg_koa_spread_pct' | 'pg_send_p99_ms' | 'pg_webhook_eps'>> {
  const db = await createDatabase();
  // The files engine's webhook run's receiver and load (bench/measure.ts): its own processes,
  // signed deliveries verified, CHATS chats over 50 connections.
  const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const receiver = await startReceiver(SECRET);
  const hook = `http://127.0.0.1:${await receiver.listen()}/hook`;
  const { dirs, secret } = await initNodes(bin, db.url, 1, (c) => {
    c.webhooks.allowPrivateTargets = true;
    c.sending = { ...c.sending, minIntervalMs: 0, jitterMs: 0 };
  });
  // Started as the files engine's send and webhook runs start theirs (bench/lib.ts startGateway:
  // log level info to a file, BENCH_NODE_ARGS), so the two engines' figures compare like for like.
  const node = await startGateway(bin, dirs[0]!);
  try {
    const created = await api(node.port, 'POST', '/api/instances/create', { 'x-api-secret': secret }, { sandbox: true, credits: 50_000_000 });
    const { instanceId: id, apiKey: key } = created.body as { instanceId: string; apiKey: string };
    await until(async () => (await api(node.port, 'POST', `/api/${id}/sandbox/scan`, { 'x-api-key': key })).body?.status === 'connected', 20_000, 'connected');
    // The same load as the files engine's sends and the Koa baseline (bench/measure.ts): 50
    // connections, 1,000 recipients in turn, after a warm-up.
    const before = await koaBaseline();
    const { run: r } = await sendLoad(`http://127.0.0.1:${node.port}`, id, key, seconds);
    const after = await koaBaseline();
    const koaRps = (before + after) / 2;
    const spread = Math.round((Math.abs(before - after) / koaRps) * 1000) / 10;
    if (spread > 25) log(`WARNING: the Koa baselines before and after the pg send run differ by ${spread} %: the machine was not steady, pg_send_vs_koa is unreliable`);
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`pg send run: ${r.non2xx} non-2xx, ${r.errors} errors`);
    log(`pg send (one node on PostgreSQL): ${Math.round(r.rps)} req/s, p99 ${r.p99} ms`);

    // A webhook burst as the files engine's: 2,000 inbound events from CHATS chats, the clock from
    // the client's first accepted call to the last receipt.
    await api(node.port, 'PUT', `/api/${id}/webhook`, { 'x-api-key': key }, { url: hook, secret: SECRET });
    const w = await webhookBurst(`http://127.0.0.1:${node.port}`, id, key, receiver, { burst: 2_000 });
    if (w.b.badSignatures > 0) throw new Error(`${w.b.badSignatures} webhook deliveries failed signature verification`);
    log(`pg webhooks, a burst of 2,000 from ${CHATS} chats: ${w.burst.total} inbound (${w.burst.non2xx} non-2xx), ${w.b.received} delivered: ${Math.round(w.eps)} deliveries/s (${Math.round(w.firstToLastEps)} first to last receipt)`);
    return { pg_send_rps: Math.round(r.rps), pg_send_vs_koa: Math.round((r.rps / koaRps) * 1000) / 1000, pg_koa_spread_pct: spread, pg_send_p99_ms: r.p99, pg_webhook_eps: Math.round(w.eps) };
  } finally {
    await node.stop();
    await receiver.stop();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
    await db.drop();
  }
}

/** Three nodes, real WhatsApp sessions, one killed: the seconds until its sessions run elsewhere. */
async function failover(bin: string, log: (l: string) => void): Promise<Pick<ClusterResult, 'failover_s' | 'failover_lost' | 'failover_sessions' | 'pg_sessions_mb_each'>> {
  const perNode = Number(process.env.BENCH_FAILOVER_SESSIONS ?? 100);
  const db = await createDatabase();
  const double = await ProtocolDouble.start({ recordStanzas: false });
  const env = { ...childPreloadEnv(), ...mediaTrustEnv(double.media.hostname) };
  const seen = new Set<string>();
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      res.writeHead(200).end();
      try {
        const e = JSON.parse(body) as { type: string; data: { text?: string } };
        if (e.type === 'message.received' && e.data.text) seen.add(e.data.text);
      } catch {
        // ignore
      }
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const hook = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
  const { dirs, secret } = await initNodes(bin, db.url, 3, (c) => {
    c.webhooks.allowPrivateTargets = true;
    c.sending = { ...c.sending, minIntervalMs: 0, jitterMs: 0 };
    c.baileys = { ...c.baileys, webSocketUrl: double.url, reconnectBaseMs: 50, reconnectMaxMs: 200 };
  });
  const nodes: DaemonProc[] = [];
  try {
    for (const d of dirs) nodes.push(await startDaemon(bin, d, { env }));
    const emptyRss = await rssMb(nodes[0]!.child.pid!);
    const made: Array<{ id: string; key: string }> = [];
    for (let i = 0; i < perNode * 3; i++) {
      const r = await api(nodes[i % 3]!.port, 'POST', '/api/instances/create', { 'x-api-secret': secret }, { premiumDays: 30 });
      made.push({ id: r.body.instanceId, key: r.body.apiKey });
    }
    for (const [i, m] of made.entries()) {
      let qr: string | null = null;
      await until(async () => {
        const r = await api(nodes[0]!.port, 'GET', `/api/${m.id}/qr-code`, { 'x-api-key': m.key });
        qr = r.status === 200 ? (r.body.qr as string) : null;
        return qr !== null;
      }, 60_000, 'a QR');
      await double.scan(qr!, { phone: `1666${String(i).padStart(7, '0')}`, answerMs: 120_000 });
    }
    const status = async (m: { id: string; key: string }, port: number): Promise<string> => (await api(port, 'GET', `/api/${m.id}/status`, { 'x-api-key': m.key }).catch(() => ({ body: null }))).body?.status ?? '';
    await until(async () => (await Promise.all(made.map((m) => status(m, nodes[0]!.port)))).every((s) => s === 'connected'), 600_000, 'all connected');
    const owners = await Promise.all(made.map(async (m) => (await api(nodes[0]!.port, 'GET', `/api/instances/${m.id}`, { 'x-api-secret': secret })).body?.node as string));
    const victim = 0;
    const moved = made.filter((_, i) => owners[i] === `bench${victim}`);
    const rss = await rssMb(nodes[victim]!.child.pid!);
    const mbEach = Math.round(((rss - emptyRss) / Math.max(1, moved.length)) * 100) / 100;

    // A sandbox instance on the victim takes inbound events through the other nodes during the kill.
    let sandbox: { id: string; key: string } | null = null;
    for (let tries = 0; tries < 20 && !sandbox; tries++) {
      const r = await api(nodes[victim]!.port, 'POST', '/api/instances/create', { 'x-api-secret': secret }, { sandbox: true, premiumDays: 30, webhookUrl: hook });
      const owner = (await api(nodes[1]!.port, 'GET', `/api/instances/${r.body.instanceId}`, { 'x-api-secret': secret })).body?.node;
      if (owner === `bench${victim}`) sandbox = { id: r.body.instanceId, key: r.body.apiKey };
    }
    if (!sandbox) throw new Error('no sandbox instance on the victim');
    await api(nodes[1]!.port, 'POST', `/api/${sandbox.id}/sandbox/scan`, { 'x-api-key': sandbox.key });
    const acked: string[] = [];
    let sending = true;
    const traffic = (async () => {
      for (let n = 0; sending; n++) {
        const text = `failover ${n}`;
        const r = await api(nodes[1 + (n % 2)]!.port, 'POST', `/api/${sandbox.id}/sandbox/inbound`, { 'x-api-key': sandbox.key }, { from: '+15550009999', message: text }).catch(() => null);
        if (r?.status === 200) acked.push(text);
        else await new Promise((res) => setTimeout(res, 100));
      }
    })();
    await new Promise((r) => setTimeout(r, 1_000));
    const killedAt = performance.now();
    nodes[victim]!.child.kill('SIGKILL');
    await until(async () => (await Promise.all(moved.map((m) => status(m, nodes[1]!.port)))).every((s) => s === 'connected'), 120_000, 'moved sessions connected');
    const seconds = (performance.now() - killedAt) / 1000;
    await new Promise((r) => setTimeout(r, 2_000));
    sending = false;
    await traffic;
    await until(() => acked.every((t) => seen.has(t)), 60_000, 'every acknowledged event delivered').catch(() => undefined);
    const lost = acked.filter((t) => !seen.has(t)).length;
    log(`failover: ${moved.length} sessions of the killed node connected on the others in ${seconds.toFixed(1)} s; ${acked.length} events accepted around it, ${lost} lost; ${mbEach} MB per session on a node`);
    return { failover_s: Math.round(seconds * 10) / 10, failover_lost: lost, failover_sessions: moved.length, pg_sessions_mb_each: mbEach };
  } finally {
    for (const n of nodes) n.child.kill('SIGKILL');
    receiver.close();
    await double.close();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
    await db.drop();
  }
}

export async function clusterBench(bin: string, log: (l: string) => void, koaBaseline: KoaBaseline, seconds: number): Promise<ClusterResult> {
  const one = await oneNode(bin, log, koaBaseline, seconds);
  const fo = await failover(bin, log);
  return { ...one, ...fo };
}

