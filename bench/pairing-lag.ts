/**
 * Pairing stall (issue "Performance, round 2", item 3): how much a daemon busy pairing accounts
 * (each with a first history sync of 200 chats / 2,000 messages) delays everything else.
 *
 * - `pairing_loop_lag_ms`: the daemon's largest event-loop delay while the others pair, read from
 *   its own `nodejs_eventloop_lag_max_seconds` gauge (prom-client's monitorEventLoopDelay, 10 ms
 *   resolution, reset at every scrape; so this file scrapes every second and keeps the max, and is
 *   the only reader of that gauge meanwhile: see `windowLagMs`).
 * - `pairing_send_p99_ms`: p99 of sends by an instance that is already connected, at a paced rate
 *   (BENCH_PAIRING_SEND_RATE, default 50/s). The sender is this file run as a child process, so its
 *   CPU is not the daemon's nor ours, and it is open-loop: a send leaves on schedule even while the
 *   previous ones wait, so a stall shows in the latencies instead of thinning the sample (a
 *   closed-loop generator with one connection would simply send less during a stall).
 *
 * Used by bench/sessions.ts: `startPairingLag(...)` once instance 0 is connected, `stop()` once
 * the others are paired.
 */
import { fork } from 'node:child_process';
import { request, Agent } from 'node:http';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fetchRetry, percentile, promValue } from './lib.js';

export interface PairingLagResult {
  pairing_loop_lag_ms: number;
  pairing_send_p99_ms: number;
  pairing_send_p50_ms: number;
  pairing_sends: number;
  /** Sends answered other than 2xx, or not answered. */
  pairing_send_failures: number;
}

export interface PairingLag {
  /** The largest event-loop delay since the previous call (for progress lines), in ms. */
  windowLagMs(): number;
  stop(): Promise<PairingLagResult>;
}

interface SenderReport { latencies: number[]; failures: number; firstFailure: string | null }

const THIS_FILE = fileURLToPath(import.meta.url);

export async function startPairingLag(options: { base: string; instanceId: string; apiKey: string; to: string; rate?: number; log?: (line: string) => void }): Promise<PairingLag> {
  const rate = options.rate ?? Number(process.env.BENCH_PAIRING_SEND_RATE ?? 50);
  const scrape = async (): Promise<number> => promValue(await (await fetchRetry(`${options.base}/metrics`)).text(), 'nodejs_eventloop_lag_max_seconds') * 1000;
  await scrape(); // resets the gauge: what came before (instance 0's own pairing) is not counted
  let max = 0;
  let window = 0;
  let running = true;
  const sampler = (async () => {
    while (running) {
      await new Promise((r) => setTimeout(r, 1000));
      const lag = await scrape();
      max = Math.max(max, lag);
      window = Math.max(window, lag);
    }
  })();

  const url = `${options.base}/api/${options.instanceId}/send`;
  const body = JSON.stringify({ phone: options.to, message: 'pairing-lag probe' });
  const sender = fork(THIS_FILE, [url, options.apiKey, String(rate), body], { execArgv: ['--import=tsx'], env: { ...process.env, NODE_OPTIONS: '' }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const report = new Promise<SenderReport>((resolve, reject) => {
    sender.once('message', (m: SenderReport) => resolve(m));
    sender.once('exit', (code) => reject(new Error(`the paced sender exited (${code}) without a report`)));
  });

  return {
    windowLagMs() {
      const w = window;
      window = 0;
      return w;
    },
    async stop() {
      running = false;
      await sampler;
      sender.send('stop');
      const r = await report;
      const sorted = r.latencies.sort((a, b) => a - b);
      if (r.firstFailure) options.log?.(`pairing-lag: ${r.failures} failed sends, first: ${r.firstFailure}`);
      return {
        pairing_loop_lag_ms: Math.round(max),
        pairing_send_p99_ms: Math.round(percentile(sorted, 99)),
        pairing_send_p50_ms: Math.round(percentile(sorted, 50)),
        pairing_sends: sorted.length,
        pairing_send_failures: r.failures,
      };
    },
  };
}

// ---- the paced sender (child process) --------------------------------------------------------------

/** Sends `rate` per second, open-loop, until the parent says stop; then reports every latency. */
function pacedSender(url: string, apiKey: string, rate: number, body: string): void {
  // At most 64 connections: a send beyond them waits in the agent, its latency still counted from
  // when it was due (open-loop), without the sender piling thousands of sockets on a stalled daemon.
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const target = new URL(url);
  const latencies: number[] = [];
  let failures = 0;
  let firstFailure: string | null = null;
  let inFlight = 0;
  let stopping = false;
  const fail = (why: string) => {
    failures += 1;
    firstFailure ??= why;
  };
  const one = () => {
    const started = performance.now();
    inFlight += 1;
    const req = request(
      { host: target.hostname, port: target.port, path: target.pathname, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-api-key': apiKey } },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => {
          inFlight -= 1;
          if (res.statusCode && res.statusCode >= 200 && res.statusCode < 300) latencies.push(performance.now() - started);
          else fail(`${res.statusCode} ${text.slice(0, 200)}`);
          if (stopping) finish();
        });
      },
    );
    req.on('error', (e) => {
      inFlight -= 1;
      fail(e.message);
      if (stopping) finish();
    });
    req.end(body);
  };
  const t0 = performance.now();
  let sent = 0;
  const timer = setInterval(() => {
    const due = Math.floor(((performance.now() - t0) / 1000) * rate);
    for (; sent < due; sent++) one();
  }, 5);
  let done = false;
  const finish = () => {
    if (done || inFlight > 0) return;
    done = true;
    process.send!({ latencies, failures, firstFailure } satisfies SenderReport, () => process.exit(0));
  };
  // The bench gone (killed, crashed): stop sending at once.
  process.on('disconnect', () => process.exit(0));
  process.on('message', () => {
    stopping = true;
    clearInterval(timer);
    finish();
    // A send that never answers is a failure, not a hang of the bench.
    setTimeout(() => {
      failures += inFlight;
      inFlight = 0;
      finish();
    }, 30_000).unref();
  });
}

if (process.send && process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [url, apiKey, rate, body] = process.argv.slice(2);
  pacedSender(url!, apiKey!, Number(rate), body!);
}
