/**
 * The client's-view measurements, shared by the idle-host runs (bench/run.ts) and the busy-host ones
 * (bench/busy.ts): load from its own process (bench/load.ts), webhooks counted by a receiver in its
 * own process (bench/webhook-receiver.ts).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { cpuSeconds, percentile, runLoad, stop, type LoadReport, type LoadSpec, type Receiver } from './lib.js';

export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
/** Distinct recipients of the sends (the Koa baseline gets the same bodies). */
export const PHONES = Number(process.env.BENCH_PHONES ?? 1000);
/** Distinct senders (chats) of the inbound events behind the webhooks. */
export const CHATS = Number(process.env.BENCH_CHATS ?? 100);
export const WARMUP_SECONDS = 2;

const KOA = fileURLToPath(new URL('./koa-baseline.ts', import.meta.url));

/** The send load (PHONES recipients, 50 connections) against the bare Koa handler in its own process, after a warm-up. */
export async function koaRps(seconds: number): Promise<{ warmup: LoadReport; run: LoadReport }> {
  const child = spawn(process.execPath, ['--import=tsx', KOA], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => child.stdout.once('data', (d: Buffer) => resolve((JSON.parse(d.toString()) as { port: number }).port)));
  try {
    const spec: LoadSpec = { kind: 'send', url: `http://127.0.0.1:${port}/send`, connections: CONNECTIONS, phones: PHONES };
    const warmup = await runLoad({ ...spec, seconds: WARMUP_SECONDS });
    return { warmup, run: await runLoad({ ...spec, seconds }) };
  } finally {
    await stop(child);
  }
}

/** Sends through an instance of a running daemon (`base`: http://host:port), after a warm-up. */
export async function sendLoad(base: string, instanceId: string, apiKey: string, seconds: number): Promise<{ warmup: LoadReport; run: LoadReport }> {
  const spec: LoadSpec = { kind: 'send', url: `${base}/api/${instanceId}/send`, headers: { 'x-api-key': apiKey }, connections: CONNECTIONS, phones: PHONES };
  const warmup = await runLoad({ ...spec, seconds: WARMUP_SECONDS });
  return { warmup, run: await runLoad({ ...spec, seconds }) };
}

export interface WebhookFigures {
  /** Deliveries per second, the client's first accepted inbound call to the last delivery. */
  eps: number;
  /** The old figure, first to last delivery (kept to show the difference). */
  firstToLastEps: number;
  /** Deliveries per second over the warm-up (a daemon just started), the client's first accepted call to the last receipt. */
  coldEps: number;
  /** The daemon's CPU (user + system) per delivered event over the burst, µs; null without its pid. */
  cpuUsPerEvent: number | null;
  burstInbound: number;
  burstNon2xx: number;
  burstDelivered: number;
  /** Client's inbound call to receipt at `rate` events/s, ms. */
  p50: number;
  p99: number;
  pacedInbound: number;
  pacedDelivered: number;
  badSignatures: number;
}

/** Waits until the receiver has `expected` events, or `ms` passed. */
async function drain(receiver: Receiver, expected: number, ms = 60_000): Promise<void> {
  const until = Date.now() + ms;
  while ((await receiver.stats()).received < expected && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
}

/**
 * A warm-up (WARMUP_SECONDS of inbound events at full speed, as the send figures get), then a burst
 * of `burst` from CHATS chats over CONNECTIONS connections: deliveries per second from the client's
 * first accepted call to the last receipt (`eps`), and from the first receipt (`firstToLastEps`).
 *
 * The warm-up was 500 events until 2026-12-01: about a third of a second of a daemon started a
 * moment before, so the burst measured V8 still compiling the delivery path. The daemon's CPU per
 * delivered event (`cpuUsPerEvent`) was 740 to 1,235 µs after 500 events and 410 to 580 µs after
 * 5,000, same build, same hour; a client talks to a daemon that has been up. The warm-up's own
 * figure stays in the report as the cold one (`coldEps`).
 */
export async function webhookBurst(base: string, instanceId: string, apiKey: string, receiver: Receiver, options: { burst: number; warmupSeconds?: number; daemonPid?: number }) {
  const spec: LoadSpec = { kind: 'inbound', url: `${base}/api/${instanceId}/sandbox/inbound`, headers: { 'x-api-key': apiKey }, connections: CONNECTIONS, chats: CHATS };
  await receiver.reset();
  const warmup = await runLoad({ ...spec, seconds: options.warmupSeconds ?? WARMUP_SECONDS });
  await drain(receiver, warmup.total);
  const w = await receiver.stats();
  const coldEps = w.received / Math.max(0.001, (w.lastAt - warmup.firstAcceptedAt) / 1000);
  await receiver.reset();
  // The daemon's CPU per event: a figure the machine's hour moves less than the rate (other
  // processes take cores, not instructions).
  const cpu0 = options.daemonPid === undefined ? 0 : await cpuSeconds(options.daemonPid);
  const burst = await runLoad({ ...spec, amount: options.burst });
  await drain(receiver, burst.total);
  const cpu = options.daemonPid === undefined ? null : (await cpuSeconds(options.daemonPid)) - cpu0;
  const b = await receiver.stats();
  const eps = b.received / Math.max(0.001, (b.lastAt - burst.firstAcceptedAt) / 1000);
  const firstToLastEps = b.received / Math.max(0.001, (b.lastAt - b.firstAt) / 1000);
  const cpuUsPerEvent = cpu === null ? null : Math.round((cpu * 1e6) / Math.max(1, b.received));
  return { spec, burst, b, eps, firstToLastEps, cpuUsPerEvent, coldEps };
}

/**
 * Webhooks of a sandbox instance whose webhook points at `receiver`: a warm-up burst, a burst of
 * `burst` inbound events from CHATS chats (eps), then `rate` events/s for `seconds` (latency).
 */
export async function webhookLoad(base: string, instanceId: string, apiKey: string, receiver: Receiver, options: { burst: number; warmupSeconds?: number; seconds: number; rate: number; daemonPid?: number }): Promise<WebhookFigures> {
  const { spec, burst, b, eps, firstToLastEps, cpuUsPerEvent, coldEps } = await webhookBurst(base, instanceId, apiKey, receiver, options);
  await receiver.reset();
  const paced = await runLoad({ ...spec, seconds: options.seconds, rate: options.rate });
  await drain(receiver, paced.total);
  const p = await receiver.stats(true);
  const latencies = p.latencies.sort((x, y) => x - y);
  return {
    eps,
    firstToLastEps,
    cpuUsPerEvent,
    coldEps,
    burstInbound: burst.total,
    burstNon2xx: burst.non2xx,
    burstDelivered: b.received,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    pacedInbound: paced.total,
    pacedDelivered: p.received,
    badSignatures: b.badSignatures + p.badSignatures,
  };
}
