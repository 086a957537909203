// Diagnostic, not part of `npm run bench`: what one debited send costs on PostgreSQL (CPU of the daemon
// and of its database backends, commits and row changes per send), from the server's own statistics.
// `node --import=tsx bench/pg-diag.ts` after `npm run build`; LOG_ALL=1 logs every statement's duration
// (log_min_duration_statement) to the server log, ASYNC_COMMIT=1 runs the database without WAL flushes.
// MODE=phones sends the bench's load (1,000 recipients, bench/load.ts); MODE=inbound received messages with a webhook.
import pg from 'pg';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { autocannon, startDaemon } from './lib.js';

const bin = join(process.cwd(), 'bin/gateway');
const server = 'postgres://postgres@127.0.0.1:5432/postgres';
const name = `gwdiag_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: server });
await admin.connect();
await admin.query(`CREATE DATABASE ${name}`);
if (process.env.LOG_ALL) await admin.query(`ALTER DATABASE ${name} SET log_min_duration_statement = 0`);
if (process.env.ASYNC_COMMIT) await admin.query(`ALTER DATABASE ${name} SET synchronous_commit = off`);
const url = `postgres://postgres@127.0.0.1:5432/${name}`;
const dir = await mkdtemp(join(tmpdir(), 'gw-diag-'));
const out = spawnSync(process.execPath, [bin, '--data-dir', dir, 'init', '--yes', '--json', '--allow-private-webhooks', '--database', url, '--node-id', 'diag'], { encoding: 'utf8' });
const secret = JSON.parse(out.stdout).serverSecret as string;
const cfg = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'));
cfg.sending = { ...cfg.sending, minIntervalMs: 0, jitterMs: 0 };
cfg.webhooks = { ...cfg.webhooks, allowPrivateTargets: true };
await writeFile(join(dir, 'config.json'), JSON.stringify(cfg));
const node = await startDaemon(bin, dir, process.env.PROF ? { nodeArgs: ['--cpu-prof', '--cpu-prof-dir', process.env.PROF] } : {});
const j = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
  const r = await fetch(`http://127.0.0.1:${node.port}${path}`, { method, headers: { ...headers, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
  return r.json() as Promise<any>;
};
const created = await j('POST', '/api/instances/create', { 'x-api-secret': secret }, { sandbox: true, credits: 50_000_000 });
await j('POST', `/api/${created.instanceId}/sandbox/scan`, { 'x-api-key': created.apiKey });
await new Promise((r) => setTimeout(r, 500));
const db = new pg.Client({ connectionString: url });
await db.connect();
const stats = async () => {
  const d = (await db.query('SELECT xact_commit::int c, xact_rollback::int r FROM pg_stat_database WHERE datname = current_database()')).rows[0];
  const t = (await db.query('SELECT relname, (n_tup_ins)::int i, (n_tup_upd)::int u, (n_tup_del)::int d FROM pg_stat_user_tables')).rows;
  return { d, t: Object.fromEntries(t.map((x: any) => [x.relname, x])) };
};
if (process.env.NO_TRIGGERS) for (const t of ['messages', 'media', 'auth_creds', 'auth_keys', 'credit_holds', 'handovers', 'conversations']) await db.query(`ALTER TABLE ${t} DISABLE TRIGGER USER`);
const seconds = Number(process.env.SECONDS_RUN ?? 5);
const send = `http://127.0.0.1:${node.port}/api/${created.instanceId}/send`;
const headers = { 'content-type': 'application/json', 'x-api-key': created.apiKey };
const body = JSON.stringify({ phone: '+15551234567', message: 'bench' });
if (process.env.MODE === 'phones') {
  const { runLoad } = await import('./lib.js');
  const { PHONES } = await import('./measure.js');
  await runLoad({ kind: 'send', url: send, headers: { 'x-api-key': created.apiKey }, connections: 50, phones: PHONES, seconds: 2 });
} else if (process.env.MODE !== 'inbound') await autocannon(send, { connections: 50, seconds: 2, method: 'POST', body, headers });
await new Promise((r) => setTimeout(r, 1500));
await db.query('SELECT pg_stat_clear_snapshot()');
const ticks = async (): Promise<{ node: number; pg: number }> => {
  const read = async (pid: number) => {
    try {
      const f = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
      return Number(f[11]) + Number(f[12]);
    } catch {
      return 0;
    }
  };
  const pids = (await db.query('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()')).rows.map((x: any) => x.pid as number);
  let pgTicks = 0;
  for (const p of pids) pgTicks += await read(p);
  return { node: await read(node.child.pid!), pg: pgTicks };
};
const before = await stats();
// With LOG_ALL, the server log shows this line where the measured phase starts (and MARK-END where it ends).
await db.query(`SELECT 'MARK-START ${name}'`);
const t0 = await ticks();
let r: { rps: number; p99: number };
if (process.env.MODE === 'inbound') {
  // Received messages with a webhook: 20 chats, each sender one after another (as bench/cluster.ts).
  const { createServer } = await import('node:http');
  let got = 0;
  const receiver = createServer((req, res) => req.resume().on('end', () => { got += 1; res.writeHead(200).end(); }));
  await new Promise<void>((ok) => receiver.listen(0, '127.0.0.1', ok));
  console.log(await j('PUT', `/api/${created.instanceId}/webhook`, { 'x-api-key': created.apiKey }, { url: `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook` }));
  const inbound = `http://127.0.0.1:${node.port}/api/${created.instanceId}/sandbox/inbound`;
  const end = Date.now() + seconds * 1000;
  let sent = 0;
  await Promise.all(Array.from({ length: 20 }, async (_, k) => {
    for (let i = 0; Date.now() < end; i++) {
      const res = await fetch(inbound, { method: 'POST', headers, body: JSON.stringify({ from: `+1555100${1000 + k}`, message: `${k}:${i}` }) });
      await res.arrayBuffer();
      sent += 1;
    }
  }));
  const t = Date.now();
  while (got < sent && Date.now() - t < 30_000) await new Promise((ok) => setTimeout(ok, 50));
  console.log(`inbound: ${Math.round(sent / seconds)}/s accepted, ${got} of ${sent} delivered ${((Date.now() - t) / 1000).toFixed(1)} s after the last`);
  receiver.close();
  r = { rps: sent / seconds, p99: 0 };
} else if (process.env.MODE === 'phones') {
  // The bench's own send load (bench/load.ts in its own process): 50 connections, 1,000 recipients in turn.
  const { runLoad } = await import('./lib.js');
  const { PHONES } = await import('./measure.js');
  const run = await runLoad({ kind: 'send', url: send, headers: { 'x-api-key': created.apiKey }, connections: 50, phones: PHONES, seconds });
  r = { rps: run.rps, p99: run.p99 };
} else {
  r = await autocannon(send, { connections: Number(process.env.CONN ?? 50), seconds, method: 'POST', body, headers });
}
await db.query(`SELECT 'MARK-END ${name}'`);
await new Promise((r) => setTimeout(r, 1500));
await db.query('SELECT pg_stat_clear_snapshot()');
const t1 = await ticks();
const after = await stats();
const n = r.rps * seconds;
console.log(`sends: ${Math.round(r.rps)} req/s p99 ${r.p99} ms (~${Math.round(n)} sends)`);
console.log(`CPU per send: daemon ${((t1.node - t0.node) * 10 * 1000 / n).toFixed(0)} µs, its PostgreSQL backends ${((t1.pg - t0.pg) * 10 * 1000 / n).toFixed(0)} µs`);
console.log(`commits per send: ${((after.d.c - before.d.c) / n).toFixed(2)}; rollbacks ${after.d.r - before.d.r}`);
for (const [rel, a] of Object.entries(after.t) as [string, any][]) {
  const b = before.t[rel] ?? { i: 0, u: 0, d: 0 };
  const di = a.i - b.i, du = a.u - b.u, dd = a.d - b.d;
  if (di + du + dd > 0) console.log(`${rel}: ins ${(di / n).toFixed(2)} upd ${(du / n).toFixed(2)} del ${(dd / n).toFixed(2)} per send`);
}
await db.end();
await node.stop();
await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
await admin.end();
await rm(dir, { recursive: true, force: true });
