/**
 * `npm run bench`: the gateway and a baseline, in the same run on the same machine, reported as
 * ratios. Every send is a real, durable, debited send. The last line is one JSON object.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { autocannon, percentile, rssMb, startGateway, stop } from './lib.js';
import { seedStore } from './seed.js';
import { CreditStore } from '../src/store/credits.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin/gateway');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = 50;
const SEND_BODY = JSON.stringify({ phone: '+15551234567', message: 'benchmark message' });
const JSON_HEADERS = { 'content-type': 'application/json' };

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

function run(args: string[], dataDir: string): Promise<{ code: number | null; stdout: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, '--data-dir', dataDir, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, ms: performance.now() - started }));
  });
}

async function freshDataDir(patch: (c: Record<string, any>) => void = () => undefined): Promise<string> { // eslint-disable-line @typescript-eslint/no-explicit-any -- config JSON
  const dir = await mkdtemp(join(tmpdir(), 'gw-bench-'));
  const init = await run(['init', '--yes', '--json'], dir);
  if (init.code !== 0) throw new Error('init failed');
  const config = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'));
  patch(config);
  await writeFile(join(dir, 'config.json'), JSON.stringify(config, null, 2));
  return dir;
}

async function koaBaseline(): Promise<number> {
  const child = spawn(process.execPath, ['--import=tsx', join(ROOT, 'bench/koa-baseline.ts')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(JSON.parse(d.toString()).port)));
  const url = `http://127.0.0.1:${port}/send`;
  await autocannon(url, { connections: CONNECTIONS, seconds: 2, method: 'POST', body: SEND_BODY, headers: JSON_HEADERS });
  const r = await autocannon(url, { connections: CONNECTIONS, seconds: SECONDS, method: 'POST', body: SEND_BODY, headers: JSON_HEADERS });
  await stop(child);
  log(`koa baseline: ${Math.round(r.rps)} req/s, p99 ${r.p99} ms`);
  return r.rps;
}

/** Sends through a connected sandbox instance in a store of `count` instances. */
async function sendRun(count: number, premium = false): Promise<{ rps: number; p99: number; startupMs: number; rss: number; total: number; dataDir: string }> {
  const dataDir = await freshDataDir();
  const credits = 50_000_000;
  const inst = await seedStore(dataDir, count, credits, premium);
  const gw = await startGateway(BIN, dataDir);
  const rssStart = await rssMb(gw.child.pid!);
  await fetch(`http://127.0.0.1:${gw.port}/api/${inst.id}/sandbox/scan`, { method: 'POST', headers: { 'x-api-key': inst.key } });
  const url = `http://127.0.0.1:${gw.port}/api/${inst.id}/send`;
  const headers = { ...JSON_HEADERS, 'x-api-key': inst.key };
  await autocannon(url, { connections: CONNECTIONS, seconds: 2, method: 'POST', body: SEND_BODY, headers });
  const r = await autocannon(url, { connections: CONNECTIONS, seconds: SECONDS, method: 'POST', body: SEND_BODY, headers });
  const rss = Math.max(rssStart, await rssMb(gw.child.pid!));
  await gw.stop();
  const disk = await new CreditStore(dataDir).read(inst.id);
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`send run had ${r.non2xx} non-2xx answers and ${r.errors} errors`);
  if (!premium && disk.spent < r.total) throw new Error(`only ${disk.spent} credits debited for ${r.total} sends`);
  log(`send (${count} instances${premium ? ', premium: nothing to debit' : ''}): ${Math.round(r.rps)} req/s, p99 ${r.p99} ms, start ${gw.startupMs} ms, rss ${rss} MiB, ${disk.spent} credits debited on disk`);
  return { rps: r.rps, p99: r.p99, startupMs: gw.startupMs, rss, total: r.total, dataDir };
}

async function cliCreate(dataDir: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const r = await run(['instance', 'create', '--sandbox', '--json'], dataDir);
    if (r.code !== 0) throw new Error('instance create failed');
    times.push(r.ms);
  }
  times.sort((a, b) => a - b);
  const median = Math.round(times[2]!);
  log(`cli instance create (10,000 instances): median ${median} ms of 5 (${times.map((t) => Math.round(t)).join(', ')})`);
  return median;
}

/** Webhook deliveries to a local receiver: saturated throughput, then p99 at 500 events/s. */
async function webhookRun(): Promise<{ eps: number; p99: number; delivered: number }> {
  const latencies: number[] = [];
  let received = 0;
  let first = 0;
  let last = 0;
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      res.writeHead(200).end();
      try {
        const event = JSON.parse(body) as { type: string; data: { timestamp: string } };
        if (event.type !== 'message.received') return;
        const now = Date.now();
        received += 1;
        first ||= now;
        last = now;
        latencies.push(now - Date.parse(event.data.timestamp));
      } catch {
        // ignore
      }
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const receiverPort = (receiver.address() as { port: number }).port;
  const dataDir = await freshDataDir((c) => (c.webhooks.allowPrivateTargets = true));
  const created = await run(['instance', 'create', '--sandbox', '--webhook-url', `http://127.0.0.1:${receiverPort}/hook`, '--webhook-secret', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', '--json'], dataDir);
  const inst = JSON.parse(created.stdout) as { instanceId: string; apiKey: string };
  const gw = await startGateway(BIN, dataDir);
  await fetch(`http://127.0.0.1:${gw.port}/api/${inst.instanceId}/sandbox/scan`, { method: 'POST', headers: { 'x-api-key': inst.apiKey } });
  const url = `http://127.0.0.1:${gw.port}/api/${inst.instanceId}/sandbox/inbound`;
  const load = (seconds: number, rate: number) =>
    new Promise<{ total: number; non2xx: number }>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import=tsx', join(ROOT, 'bench/inbound-load.ts'), url, inst.apiKey, String(seconds), String(rate)], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error('inbound load failed'))));
    });
  const drain = async (expected: number) => {
    const until = Date.now() + 60_000;
    while (received < expected && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  };

  const saturated = await load(SECONDS, 0);
  await drain(saturated.total);
  const eps = received / Math.max(0.001, (last - first) / 1000);
  log(`webhooks saturated: ${saturated.total} inbound (${saturated.non2xx} non-2xx), ${received} delivered, ${Math.round(eps)} deliveries/s`);

  received = 0;
  latencies.length = 0;
  const paced = await load(SECONDS, 500);
  await drain(paced.total);
  latencies.sort((a, b) => a - b);
  const p99 = percentile(latencies, 99);
  log(`webhooks at 500/s: ${paced.total} inbound, ${received} delivered, p50 ${percentile(latencies, 50)} ms, p99 ${p99} ms (inbound call to receipt)`);
  await gw.stop();
  receiver.close();
  await rm(dataDir, { recursive: true, force: true });
  return { eps, p99, delivered: received };
}

async function main(): Promise<void> {
  log(`machine: ${(await import('node:os')).cpus().length} cores, node ${process.version}; ${SECONDS} s per run, ${CONNECTIONS} connections`);
  const koaRps = await koaBaseline();
  const ten = await sendRun(10);
  const tenK = await sendRun(10_000);
  // Not a budget: separates the HTTP stack's cost from the durable debit's.
  const premium = await sendRun(10, true);
  const cliMs = await cliCreate(tenK.dataDir);
  await rm(ten.dataDir, { recursive: true, force: true });
  await rm(tenK.dataDir, { recursive: true, force: true });
  await rm(premium.dataDir, { recursive: true, force: true });
  const webhooks = await webhookRun();
  const result = {
    send_rps: Math.round(ten.rps),
    koa_rps: Math.round(koaRps),
    send_vs_koa: Math.round((ten.rps / koaRps) * 1000) / 1000,
    send_p99_ms: ten.p99,
    send_premium_rps: Math.round(premium.rps),
    send_premium_vs_koa: Math.round((premium.rps / koaRps) * 1000) / 1000,
    webhook_eps: Math.round(webhooks.eps),
    webhook_p99_ms: webhooks.p99,
    send_10k_rps: Math.round(tenK.rps),
    send_10k_vs_10: Math.round((tenK.rps / ten.rps) * 1000) / 1000,
    rss_mb_10k: tenK.rss,
    rss_mb_10: ten.rss,
    startup_ms_10k: tenK.startupMs,
    startup_ms_10: ten.startupMs,
    cli_create_ms: cliMs,
  };
  log(JSON.stringify(result));
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
