/**
 * The busy host (issue "Performance, round 2", item 2): the same client's-view send and webhook
 * measurements as bench/run.ts, taken against a daemon that is already running N realistic
 * sessions (the sessions bench calls `busyBench` from its `onConnected` once all N are connected).
 *
 * - `send_vs_koa_busy`: debited sandbox sends/s (50 connections, PHONES recipients) over the bare
 *   Koa handler's req/s, both measured now, while the sessions are connected (they share the CPU).
 * - `webhook_eps_busy`: a burst of 2,000 inbound events from CHATS chats, first accepted inbound
 *   call to last receipt at a receiver in its own process.
 * The daemon's config must allow private webhook targets (`webhooks.allowPrivateTargets`): the
 * receiver listens on 127.0.0.1.
 */
import { startReceiver } from './lib.js';
import { koaRps, sendLoad, webhookLoad } from './measure.js';

/** A connected, debited sandbox instance of a running daemon. */
export interface BusyTarget {
  /** The daemon, http://host:port. */
  url: string;
  instanceId: string;
  apiKey: string;
  /** Instances `busyInstance` created, deleted again by `busyBench`. */
  created?: string[];
}

const round3 = (n: number): number => Math.round(n * 1000) / 1000;

async function json<T>(res: Response, what: string): Promise<T> {
  const text = await res.text();
  if (!res.ok) throw new Error(`${what}: ${res.status} ${text.slice(0, 500)}`);
  return JSON.parse(text) as T;
}

/**
 * Creates a sandbox instance with `credits` through the admin API (`secret`: the server secret) and
 * connects it. The first instance of an owner gets the premium trial (nothing to debit), so a
 * throwaway one takes it and the second, the one measured, is debited.
 */
export async function busyInstance(daemon: { url: string; secret: string }, credits = 50_000_000): Promise<BusyTarget> {
  const owner = `bench-busy-${Date.now()}`;
  const create = (body: Record<string, unknown>) =>
    fetch(`${daemon.url}/api/instances/create`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-secret': daemon.secret }, body: JSON.stringify(body) });
  const trial = await json<{ instanceId: string }>(await create({ owner, sandbox: true, name: 'bench-busy-trial' }), 'creating the trial instance');
  const inst = await json<{ instanceId: string; apiKey: string; premium: boolean }>(await create({ owner, sandbox: true, name: 'bench-busy', credits }), 'creating the busy instance');
  if (inst.premium) throw new Error('the busy instance is premium: its sends would not be debited');
  for (let tries = 0; ; tries++) {
    const scan = await fetch(`${daemon.url}/api/${inst.instanceId}/sandbox/scan`, { method: 'POST', headers: { 'x-api-key': inst.apiKey } });
    const body = (await scan.json()) as { status?: string };
    if (scan.status === 200 && body.status === 'connected') break;
    if (tries >= 200) throw new Error(`the busy sandbox instance did not connect: ${scan.status} ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url: daemon.url, instanceId: inst.instanceId, apiKey: inst.apiKey, created: [trial.instanceId, inst.instanceId] };
}

/** `send_vs_koa_busy` and its parts (`busyBench` checks the debits). */
export async function sendVsKoaBusy(target: BusyTarget, seconds: number, log: (line: string) => void): Promise<Record<string, number>> {
  const { run: koa } = await koaRps(seconds);
  const { warmup, run } = await sendLoad(target.url, target.instanceId, target.apiKey, seconds);
  if (run.non2xx > 0 || run.errors > 0 || warmup.non2xx > 0) throw new Error(`busy send run had ${run.non2xx + warmup.non2xx} non-2xx answers and ${run.errors} errors`);
  log(`busy host: koa ${Math.round(koa.rps)} req/s; send ${Math.round(run.rps)} req/s, p99 ${run.p99} ms`);
  return { koa_busy_rps: Math.round(koa.rps), send_busy_rps: Math.round(run.rps), send_vs_koa_busy: round3(run.rps / koa.rps), send_busy_p99_ms: run.p99, send_busy_total: run.total };
}

/** `webhook_eps_busy`: points the instance's webhook at a receiver of its own, then the burst and the paced run. */
export async function webhookEpsBusy(target: BusyTarget, seconds: number, log: (line: string) => void): Promise<Record<string, number>> {
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const receiver = await startReceiver(secret);
  try {
    const port = await receiver.listen();
    await json(
      await fetch(`${target.url}/api/${target.instanceId}/webhook`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', 'x-api-key': target.apiKey },
        body: JSON.stringify({ url: `http://127.0.0.1:${port}/hook`, secret }),
      }),
      'setting the busy webhook (is webhooks.allowPrivateTargets on?)',
    );
    const w = await webhookLoad(target.url, target.instanceId, target.apiKey, receiver, { burst: 2_000, seconds, rate: 500 });
    if (w.badSignatures > 0) throw new Error(`${w.badSignatures} busy webhook deliveries failed signature verification`);
    log(`busy host: webhooks ${Math.round(w.eps)} deliveries/s (${w.burstDelivered} of ${w.burstInbound}), p99 ${w.p99} ms at 500/s`);
    return { webhook_eps_busy: Math.round(w.eps), webhook_p99_ms_busy: w.p99 };
  } finally {
    await receiver.stop();
  }
}

/** Everything above against a running daemon: the `onConnected` of the sessions bench. */
export async function busyBench(daemon: { url: string; secret: string }, seconds: number, log: (line: string) => void): Promise<Record<string, number>> {
  const target = await busyInstance(daemon);
  try {
    return await measureBusy(daemon, target, seconds, log);
  } finally {
    // Whatever the sessions bench measures next (reconnect rounds, heap) sees the daemon as it was.
    for (const id of target.created ?? []) {
      const res = await fetch(`${daemon.url}/api/instances/${id}`, { method: 'DELETE', headers: { 'x-api-secret': daemon.secret } });
      const text = await res.text();
      if (!res.ok) log(`busy host: could not delete ${id}: ${res.status} ${text.slice(0, 200)}`);
    }
  }
}

async function measureBusy(daemon: { url: string; secret: string }, target: BusyTarget, seconds: number, log: (line: string) => void): Promise<Record<string, number>> {
  const credits = async () => (await json<{ credits: number }>(await fetch(`${daemon.url}/api/instances/${target.instanceId}`, { headers: { 'x-api-secret': daemon.secret } }), 'reading credits')).credits;
  const before = await credits();
  const sends = await sendVsKoaBusy(target, seconds, log);
  const debited = before - (await credits());
  // Every send answered 2xx was debited: at least the measured run's (the warm-up's come on top).
  if (!(debited >= sends.send_busy_total!)) throw new Error(`busy host: only ${debited} credits debited for ${sends.send_busy_total} sends`);
  // A daemon whose config refuses private webhook targets cannot reach the receiver: say so and
  // keep the send figures rather than lose a whole sessions run at its end.
  const webhooks = await webhookEpsBusy(target, seconds, log).catch((err: unknown) => {
    log(`busy host: webhooks NOT measured: ${err instanceof Error ? err.message : String(err)}`);
    return {};
  });
  return { ...sends, ...webhooks };
}
