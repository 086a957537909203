/**
 * Sessions (issue 17; "Performance, round 2" items 2 and 3): real WhatsApp instances (Baileys,
 * non-sandbox) in ONE built daemon, a child process, against the protocol double in ANOTHER child
 * process (test/protocol-double/process.ts: its CPU is not counted as the daemon's and does not
 * share the bench's event loop), every account realistic (`accountData: 'realistic'`: history of
 * 200 chats / 2,000 messages, 300 contacts, 5 groups with sender keys, app-state snapshots and
 * patches), and every new device uploads its 812 pre-keys as against WhatsApp (`assumedPreKeys: 0`).
 *
 * The bench grows the daemon in stages (the curve): 1,000, 2,000 and 5,000 sessions (those up to
 * BENCH_SESSIONS, default 5000, and BENCH_SESSIONS itself). At each stage it pairs the new
 * accounts, then restarts the daemon and measures:
 *
 * - `curve_<n>_mb_each`: RSS of the daemon with n connected sessions minus RSS of the same daemon
 *   empty, divided by n (after a full GC, through the inspector); the larger of right after pairing
 *   and after a restart. `curve_<n>_heap_mb_each`: the same for the V8 heap.
 * - `curve_<n>_login_s`: seconds from spawning the daemon again (same data dir) until all n are
 *   connected (its `gateway_connections{status="connected"}` gauge); the double records how many
 *   logins were in flight at once.
 * - `curve_<n>_idle_cpu_pct`: CPU time of the daemon over BENCH_SESSIONS_IDLE_S (30) seconds with n
 *   idle sessions (keepalives only), in % of one core, once the logins have settled (the
 *   BENCH_SESSIONS_SETTLE_S (60) seconds right after the logins are `..._settle_cpu_pct`).
 *
 * The first stage (1,000, or BENCH_SESSIONS if smaller) also gives today's keys (`sessions_mb_each`,
 * `sessions_login_s`, `sessions_idle_cpu_pct`, `reconnect_heap_growth_pct`: heap after round R (10)
 * of the double dropping every connection and all logging in again, against the heap after round
 * 1, ...) and, while its accounts pair, the pairing stall (bench/pairing-lag.ts:
 * `pairing_loop_lag_ms`, `pairing_send_p99_ms`; then `quiet_loop_lag_ms` and `quiet_send_p99_ms`, the
 * same probe for 15 s with nothing pairing, to read them against). The 5,000 stage gives `sessions5k_mb_each`,
 * `sessions5k_login_s`, `sessions5k_idle_cpu_pct` and `reconnect5k_heap_growth_pct`; with
 * BENCH_SESSIONS below 5000 these keys are absent (not measured).
 *
 * Pairing is setup, not measured against a budget (`sessions_pair_s` is diagnostic): each stage's
 * measured part starts at the daemon's restart.
 *
 * `sessionsBench(bin, log, { n, onConnected })`: once all n are connected after the last restart
 * (and idle CPU and memory are taken), `onConnected({ url, secret, dataDir, instances })` runs and
 * its keys are merged into the result.
 *
 * The first stage's accounts pair at BENCH_SESSIONS_PAIR_RATE a second (2.5, the issue's figure; 0:
 * unpaced), BENCH_SESSIONS_PAIR_CONCURRENCY (8) at most at once.
 * BENCH_SESSIONS_ROUNDS sets the reconnect rounds, BENCH_SESSIONS_CONNECTS the daemon's
 * `baileys.maxConcurrentConnects` (connections opened at once at start-up; default 8),
 * BENCH_SESSIONS_THREADS the daemon's `baileys.sessionThreads` (default: the config's),
 * BENCH_DOUBLE_NICE the double's nice value (default 10),
 * BENCH_SESSIONS_LOGIN_AT=16,32 times the login again at each stage with each of these instead, then
 * with the configured value again (`curve_<n>_login_s_at_<c>`, `..._at_configured`),
 * BENCH_SESSIONS_SNAPSHOTS a directory for heap snapshots of the first stage (after pairing, after
 * round 1, after the last round), BENCH_SESSIONS_ALLOC a directory for an allocation profile of the
 * first stage's pairing (`sessions-pairing.heapprofile`, freed objects included).
 * Run alone: `npm run build && BENCH_SESSIONS=1000 node --import=tsx bench/sessions.ts`.
 */
import { rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { childPreloadEnv } from '../test/protocol-double/index.js';
import { mediaTrustEnv } from '../test/protocol-double/media.js';
import { DoubleProcess } from '../test/protocol-double/process.js';
import { cpuSeconds, fetchRetry, initDataDir, Inspector, patchConfig, promValue, rssMb, startDaemon, type DaemonProc } from './lib.js';
import { startPairingLag, type PairingLag, type PairingLagResult } from './pairing-lag.js';

/** The keys of the first stage (1,000 sessions, or BENCH_SESSIONS if smaller), as before the curve. */
export interface SessionsResult extends Record<string, number> {
  sessions_n: number;
  sessions_mb_each: number;
  sessions_heap_mb_each: number;
  sessions_login_s: number;
  sessions_login_max_concurrent: number;
  sessions_idle_cpu_pct: number;
  sessions_settle_cpu_pct: number;
  reconnect_heap_growth_pct: number;
  reconnect_round_s: number;
  sessions_pair_s: number;
}

/** What `onConnected` gets: the daemon with every session connected. */
export interface ConnectedDaemon {
  url: string;
  secret: string;
  dataDir: string;
  instances: Array<{ id: string; apiKey: string }>;
}

export interface SessionsOptions {
  /** Sessions at the last stage (default BENCH_SESSIONS, else 5000). */
  n?: number;
  onConnected?: (d: ConnectedDaemon) => Promise<Record<string, number>>;
}

/** The figures of one stage of the curve. */
interface Stage {
  n: number;
  mbEach: number;
  heapMbEach: number;
  loginS: number;
  loginMax: number;
  settleCpu: number;
  idleCpu: number;
  pairS: number;
  /** BENCH_SESSIONS_LOGIN_AT: the login again with each of these logins in flight, then with the configured number again. */
  loginAt: Array<{ connects: number | 'configured'; loginS: number; loginMax: number }>;
}

const MB = 1024 * 1024;
const round1 = (n: number): number => Math.round(n * 10) / 10;
const round2 = (n: number): number => Math.round(n * 100) / 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The contact instance 0's probe sends go to (a contact of the double, which decrypts them). */
const PROBE_TO = '+15550001000';
const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

/** Polls until `check` returns a value (not undefined/false), or throws after `ms`. */
async function until<T>(check: () => Promise<T | undefined | false> | T | undefined | false, ms: number, what: string, every = 250): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(every);
  }
}

/**
 * A request on a connection of its own (no keep-alive): a POST is not tried again (it may have
 * created an instance), so it must not ride a pooled socket the daemon may be closing (the race
 * that killed a 5k run on a loaded machine with "fetch failed").
 */
function freshRequest(url: string, method: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, agent: false, headers: { ...headers, ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }) } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => {
        let parsed: Record<string, unknown> = {};
        try {
          parsed = JSON.parse(text) as Record<string, unknown>;
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** Runs `work(i)` for i in [from, to) with at most `concurrency` at once. */
async function pool(from: number, to: number, concurrency: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = from;
  await Promise.all(Array.from({ length: Math.max(0, Math.min(to - from, concurrency)) }, async () => {
    for (let i = next++; i < to; i = next++) await work(i);
  }));
}

/**
 * The stages: `points` (1,000, 2,000, 5,000; BENCH_SESSIONS_CURVE=a,b,c for a quick check of the
 * stage logic with a few sessions) up to N, starting at min(N, the first point) and ending at N.
 */
export function curveStages(n: number, points: number[] = [1000, 2000, 5000]): number[] {
  const first = Math.min(n, points[0] ?? n);
  return [...new Set([first, ...points.filter((p) => p > first && p < n), n])];
}

export async function sessionsBench(bin: string, log: (line: string) => void, opts: SessionsOptions = {}): Promise<SessionsResult> {
  const N = opts.n ?? Number(process.env.BENCH_SESSIONS ?? 5000);
  const ROUNDS = Number(process.env.BENCH_SESSIONS_ROUNDS ?? 10);
  const IDLE_S = Number(process.env.BENCH_SESSIONS_IDLE_S ?? 30);
  const SETTLE_S = Number(process.env.BENCH_SESSIONS_SETTLE_S ?? 60);
  const PAIR_CONCURRENCY = Number(process.env.BENCH_SESSIONS_PAIR_CONCURRENCY ?? 8);
  // Pairings a second while the stall is measured (the first stage): the rate of the issue's own
  // figure ("2.5 pairings a second, each with a first history sync"), at most PAIR_CONCURRENCY in
  // flight. 0: as fast as they go, which was the double's pace (~3.5 a second on these machines)
  // until its contacts signed natively, and then ~8.5: the daemon saturated, a different question.
  // Later stages pair unpaced (setup, not measured).
  const PAIR_RATE = Number(process.env.BENCH_SESSIONS_PAIR_RATE ?? 2.5);
  const CONNECTS = process.env.BENCH_SESSIONS_CONNECTS ? Number(process.env.BENCH_SESSIONS_CONNECTS) : null;
  const THREADS = process.env.BENCH_SESSIONS_THREADS ? Number(process.env.BENCH_SESSIONS_THREADS) : null;
  // BENCH_SESSIONS_LOGIN_AT=16,32: after each stage's figures, the login timed again with each of
  // these as baileys.maxConcurrentConnects, then with the configured value again (same run, same sessions).
  const LOGIN_AT = process.env.BENCH_SESSIONS_LOGIN_AT ? process.env.BENCH_SESSIONS_LOGIN_AT.split(',').map(Number) : [];
  const snapshots = process.env.BENCH_SESSIONS_SNAPSHOTS;
  const profiles = process.env.BENCH_SESSIONS_PROFILES;
  // BENCH_SESSIONS_ALLOC=dir: what the daemon allocates while the first stage pairs (a sampling heap
  // profile counting objects the collector has freed too: the garbage, not only what stays).
  const allocs = process.env.BENCH_SESSIONS_ALLOC;
  const stages = curveStages(N, process.env.BENCH_SESSIONS_CURVE ? process.env.BENCH_SESSIONS_CURVE.split(',').map(Number) : undefined);

  // assumedPreKeys 0: what WhatsApp answers a device that has just paired (it holds none of its
  // pre-keys yet), so every pairing makes and uploads Baileys' 812 pre-keys as it does for real.
  // The double at nice 19 (BENCH_DOUBLE_NICE; 0: the daemon's priority): it plays WhatsApp's servers
  // and a thousand phones, whose CPU is not the daemon's host's in production; on two cores it
  // otherwise takes the daemon's CPU whenever it is busy (see README, Performance, 2026-12-01 evening).
  // At nice 10 it still ran 28 s of every 60 while 400 phones paired, more than any thread of the
  // daemon; at 19, the lowest, it keeps below the session threads (nice 10) as well.
  const DOUBLE_NICE = Number(process.env.BENCH_DOUBLE_NICE ?? 19);
  const double = await DoubleProcess.start({ accountData: 'realistic', recordStanzas: false, assumedPreKeys: 0 }, { nice: DOUBLE_NICE });
  if (DOUBLE_NICE > 0) log(`sessions: the protocol double runs at nice ${DOUBLE_NICE}`);
  const { dataDir, secret } = await initDataDir(bin, (c) => {
    c.baileys.webSocketUrl = double.url;
    c.baileys.logLevel = 'warn';
    // BENCH_SESSIONS_CONNECTS: baileys.maxConcurrentConnects (start-up), to read the login time against it.
    if (CONNECTS) c.baileys.maxConcurrentConnects = CONNECTS;
    // BENCH_SESSIONS_THREADS: baileys.sessionThreads (the sessions on threads of their own; 0: the daemon's thread).
    if (THREADS !== null) c.baileys.sessionThreads = THREADS;
    // The pairing-lag probe sends 50/s from one instance: anti-ban pacing (400 ms apart) would
    // measure the queue, not the stall, and every instance needs credits to send at all.
    c.sending = { ...c.sending, minIntervalMs: 0, jitterMs: 0 };
    c.plans = { ...c.plans, initialCredits: 1_000_000_000 };
    // The busy-host webhook figure (bench/busy.ts, through onConnected) delivers to a receiver on 127.0.0.1.
    c.webhooks = { ...c.webhooks, allowPrivateTargets: true };
  });
  const env = { ...childPreloadEnv(), ...mediaTrustEnv(double.mediaHost) };
  const nodeArgs = process.env.BENCH_SESSIONS_NODE_ARGS ? process.env.BENCH_SESSIONS_NODE_ARGS.split(' ') : [];
  // V8's default heap limit is ~4 GiB (4,144 MiB on these machines) and a realistic session holds
  // ~0.8 MiB of heap: past ~3,000 sessions the daemon needs a higher limit, as docs/operations.md
  // tells a sysadmin (NODE_OPTIONS=--max-old-space-size=...), 1.6 MiB a session here.
  if (N > 3000 && !nodeArgs.some((a) => a.startsWith('--max-old-space-size'))) {
    nodeArgs.push(`--max-old-space-size=${Math.ceil(N * 1.6)}`);
    log(`sessions: the daemon runs with ${nodeArgs.at(-1)}`);
  }
  // BENCH_SESSIONS_STDOUT=file keeps the daemon's stdout (with --trace-gc in BENCH_SESSIONS_NODE_ARGS, its GC pauses) in its data dir.
  const stdout = process.env.BENCH_SESSIONS_STDOUT === 'file' ? ('file' as const) : ('ignore' as const);
  let gw: DaemonProc = await startDaemon(bin, dataDir, { env, inspect: true, nodeArgs, stdout });
  // Connected only to measure memory and profile: idle CPU is measured with no inspector client.
  let inspector: Inspector | null = null;
  const insp = async (): Promise<Inspector> => (inspector ??= await Inspector.connect(gw.inspectorUrl!));
  const disconnect = () => {
    inspector?.close();
    inspector = null;
  };
  const base = () => `http://127.0.0.1:${gw.port}`;
  const metrics = async () => (await fetchRetry(`${base()}/metrics`)).text();
  const connected = async () => promValue(await metrics(), 'gateway_connections{status="connected"}');
  const memory = async (label: string) => {
    const m = await (await insp()).memoryAfterGc();
    const rss = await rssMb(gw.child.pid!);
    log(`sessions: ${label}: heap ${round1(m.heapUsed / MB)} MiB, external ${round1(m.external / MB)} MiB, rss ${rss} MiB`);
    return { heap: m.heapUsed / MB, rss };
  };
  const startProfile = async () => {
    if (!profiles) return;
    await (await insp()).send('Profiler.enable');
    await (await insp()).send('Profiler.start');
  };
  const stopProfile = async (name: string, note = '') => {
    if (!profiles) return;
    const { profile: data } = await (await insp()).send<{ profile: unknown }>('Profiler.stop');
    const file = join(profiles, `sessions-${name}.cpuprofile`);
    await writeFile(file, JSON.stringify(data));
    log(`sessions: CPU profile ${file}${note}`);
  };
  /** CPU profile of the daemon over `seconds` (BENCH_SESSIONS_PROFILES=dir), for DevTools or a .cpuprofile reader. */
  const profile = async (name: string, seconds: number) => {
    if (!profiles) return;
    await startProfile();
    await sleep(seconds * 1000);
    await stopProfile(name);
  };
  const idleCpu = async (seconds: number) => {
    const cpu0 = await cpuSeconds(gw.child.pid!);
    const t0 = performance.now();
    await sleep(seconds * 1000);
    return (((await cpuSeconds(gw.child.pid!)) - cpu0) / ((performance.now() - t0) / 1000)) * 100;
  };
  const snapshot = async (name: string) => {
    if (!snapshots) return;
    const file = join(snapshots, `sessions-${name}.heapsnapshot`);
    await (await insp()).heapSnapshot(file);
    log(`sessions: heap snapshot ${file}`);
  };
  const api = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    if (method !== 'GET') return freshRequest(`${base()}${path}`, method, headers, body);
    const res = await fetchRetry(`${base()}${path}`, { method, headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
  };

  const instances: Array<{ id: string; apiKey: string }> = [];
  /** Creates, scans and syncs instance i (a new realistic account); the slot i of `instances`. */
  const pairOne = async (i: number) => {
    const created = await api('POST', '/api/instances/create', { 'x-api-secret': secret }, { sandbox: false, name: `session-${i}` });
    if (created.status !== 201) throw new Error(`create failed: ${created.status} ${JSON.stringify(created.body)}`);
    const id = created.body.instanceId as string;
    const key = { 'x-api-key': created.body.apiKey as string };
    const qr = await until(async () => {
      const r = await api('GET', `/api/${id}/qr-code`, key);
      return r.status === 200 && typeof r.body.qr === 'string' ? (r.body.qr as string) : undefined;
    }, 120_000, `the QR of ${id}`, 100);
    // A daemon busy with other accounts' first sync may take its time to answer the phone.
    const device = await double.scan(qr, { phone: `1999${String(i).padStart(7, '0')}`, answerMs: 120_000 });
    await until(async () => (await api('GET', `/api/${id}/status`, key)).body.status === 'connected' || undefined, 120_000, `${id} connected`, 100);
    await double.synced(device, 300_000);
    instances[i] = { id, apiKey: created.body.apiKey as string };
  };

  /** Pairs instances [from, to), logging progress with the daemon's event-loop lag. */
  const pairRange = async (from: number, to: number, lag: PairingLag | null) => {
    const started = performance.now();
    let done = 0;
    await pool(from, to, PAIR_CONCURRENCY, async (i) => {
      if (lag && PAIR_RATE > 0) await sleep(Math.max(0, started + ((i - from) * 1000) / PAIR_RATE - performance.now()));
      await pairOne(i);
      const count = from + ++done; // taken before the await below, which other workers pass
      if (count % 100 === 0 || count === to) {
        // The lag gauge resets at every scrape: while the probe runs, it is the only reader.
        const lagMs = lag ? lag.windowLagMs() : promValue(await metrics(), 'nodejs_eventloop_lag_max_seconds') * 1000;
        log(`sessions: ${count}/${to} paired and synced (${round1((performance.now() - started) / 1000)} s; daemon event loop lag up to ${Math.round(lagMs)} ms since the last report)`);
      }
    });
    return (performance.now() - started) / 1000;
  };

  let empty = { heap: 0, rss: 0 };
  let pairing: PairingLagResult | null = null;

  /** Reconnect rounds: the double drops every connection, all n log in again; heap after each. */
  const reconnectRounds = async (n: number, first: boolean) => {
    const heaps: number[] = [];
    const roundTimes: number[] = [];
    for (let r = 1; r <= ROUNDS; r++) {
      const { sessions: from } = await double.logins();
      const profiling = first && r === 1;
      if (profiling) await startProfile();
      const started = performance.now();
      await double.drop();
      await until(async () => ((await double.logins(from)).connected >= n && (await connected()) === n ? true : undefined), 600_000, `round ${r}: all ${n} connected again`, 100);
      const seconds = (performance.now() - started) / 1000;
      roundTimes.push(seconds);
      if (profiling) await stopProfile('reconnect');
      await sleep(3000);
      const m = await memory(`${n} sessions, reconnect round ${r} (${round1(seconds)} s, at most ${(await double.logins(from)).maxConcurrent} logins at once)`);
      heaps.push(m.heap);
      if (first && r === 1) await snapshot('round1');
      if (first && r === ROUNDS) await snapshot(`round${r}`);
    }
    const growth = heaps.length > 1 ? ((heaps[heaps.length - 1]! - heaps[0]!) / heaps[0]!) * 100 : 0;
    return { growth, roundS: mean(roundTimes) };
  };

  /** Pairs up to n, restarts, measures login, settle, idle and memory. */
  const stage = async (n: number, first: boolean): Promise<Stage> => {
    let pairS: number;
    if (first) {
      if (profiles) await startProfile();
      if (allocs) await (await insp()).send('HeapProfiler.startSampling', { samplingInterval: 65_536, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
      const t0 = performance.now();
      // Instance 0 first: the connected instance whose sends are timed while the others pair.
      await pairOne(0);
      const to = await double.contact(PROBE_TO);
      const lag = n > 1 ? await startPairingLag({ base: base(), instanceId: instances[0]!.id, apiKey: instances[0]!.apiKey, to, log }) : null;
      try {
        await pairRange(1, n, lag);
      } finally {
        if (lag) pairing = await lag.stop();
      }
      pairS = (performance.now() - t0) / 1000;
      if (pairing) log(`sessions: while ${n - 1} accounts paired: daemon event loop lag up to ${pairing.pairing_loop_lag_ms} ms; ${pairing.pairing_sends} sends by instance 0, p50 ${pairing.pairing_send_p50_ms} ms, p99 ${pairing.pairing_send_p99_ms} ms, ${pairing.pairing_send_failures} failed`);
      await stopProfile('pairing');
      if (allocs) {
        const { profile: data } = await (await insp()).send<{ profile: unknown }>('HeapProfiler.stopSampling');
        const file = join(allocs, 'sessions-pairing.heapprofile');
        await writeFile(file, JSON.stringify(data));
        log(`sessions: allocation profile ${file}`);
      }
    } else {
      pairS = await pairRange(instances.length, n, null);
    }
    await until(async () => (await connected()) === n || undefined, 60_000, `all ${n} connected`);
    const errors = await double.errors();
    if (errors.count > 0) log(`sessions: ${errors.count} double errors, first: ${JSON.stringify(errors.first)}`);
    await sleep(10_000); // Baileys finishes processing history and app state in the background
    const paired = await memory(`${n} sessions after pairing`);
    if (first) await snapshot('paired');

    // ---- restart: all n log in again, staggered ---------------------------------------------
    disconnect();
    await gw.stop();
    const { sessions: before } = await double.logins();
    gw = await startDaemon(bin, dataDir, { env, inspect: true, nodeArgs, stdout });
    const spawnedAt = gw.spawnedAt;
    if (first) await startProfile();
    await until(async () => (await connected()) === n || undefined, 900_000, `all ${n} connected after the restart`, 100);
    const loginS = (performance.now() - spawnedAt) / 1000;
    if (first) await stopProfile('restart', ' (the logins measured with the profiler on)');
    if (profiles) disconnect();
    const loginMax = (await double.logins(before)).maxConcurrent;
    log(`sessions: restart: ${n} connected ${round1(loginS)} s after the daemon was spawned (start-up ${gw.startupMs} ms); at most ${loginMax} logins in flight at once`);

    // ---- idle ---------------------------------------------------------------------------------
    // The first minute after a login storm is not idle: Baileys finishes each login in the
    // background (pre-key and props queries, its 20 s wait for a history sync, buffered events
    // flushed), and V8 collects what the logins left. Its CPU is logged in 10 s windows (and
    // profiled with BENCH_SESSIONS_PROFILES) and reported as `..._settle_cpu_pct`; idle is
    // measured after it.
    const settleWindows: number[] = [];
    if (first) await startProfile();
    for (let w = 0; w < SETTLE_S / 10; w++) settleWindows.push(await idleCpu(10));
    if (first) await stopProfile('settle');
    if (profiles) disconnect();
    log(`sessions: ${n} sessions, the first ${SETTLE_S} s after the logins, % of one core per 10 s: ${settleWindows.map(round1).join(', ')}`);
    const idle = await idleCpu(IDLE_S);
    log(`sessions: idle: ${round2(idle)} % of one core over ${IDLE_S} s with ${n} sessions`);
    if (first) await profile('idle', IDLE_S);
    if (process.env.BENCH_SESSIONS_HOLD_S) {
      log(`sessions: holding ${process.env.BENCH_SESSIONS_HOLD_S} s for a look at pid ${gw.child.pid}`);
      await sleep(Number(process.env.BENCH_SESSIONS_HOLD_S) * 1000);
    }
    const restarted = await memory(`${n} sessions after a restart`);
    const loginAt: Stage['loginAt'] = [];
    if (LOGIN_AT.length > 0) {
      // The same sessions, logging in with other limits on the logins in flight, then with the
      // configured one again (a second sample of it, taken after the others).
      for (const connects of [...LOGIN_AT, 'configured' as const]) {
        disconnect();
        await gw.stop();
        await patchConfig(dataDir, (c) => {
          if (connects === 'configured') {
            if (CONNECTS) c.baileys.maxConcurrentConnects = CONNECTS;
    // BENCH_SESSIONS_THREADS: baileys.sessionThreads (the sessions on threads of their own; 0: the daemon's thread).
    if (THREADS !== null) c.baileys.sessionThreads = THREADS;
            else delete c.baileys.maxConcurrentConnects;
          } else c.baileys.maxConcurrentConnects = connects;
        });
        const { sessions: at } = await double.logins();
        gw = await startDaemon(bin, dataDir, { env, inspect: true, nodeArgs, stdout });
        const spawned = gw.spawnedAt;
        await until(async () => (await connected()) === n || undefined, 900_000, `all ${n} connected after a restart with ${connects} logins at once`, 100);
        const s = (performance.now() - spawned) / 1000;
        const max = (await double.logins(at)).maxConcurrent;
        loginAt.push({ connects, loginS: s, loginMax: max });
        log(`sessions: restart with maxConcurrentConnects ${connects}: ${n} connected ${round1(s)} s after the daemon was spawned; at most ${max} logins in flight at once`);
        await sleep(SETTLE_S * 1000);
      }
    }
    const s: Stage = {
      n,
      mbEach: Math.max(paired.rss - empty.rss, restarted.rss - empty.rss) / n,
      heapMbEach: Math.max(paired.heap - empty.heap, restarted.heap - empty.heap) / n,
      loginS,
      loginMax,
      settleCpu: mean(settleWindows),
      idleCpu: idle,
      pairS,
      loginAt,
    };
    log(`sessions: curve at ${n}: ${round2(s.mbEach)} MB each (heap ${round2(s.heapMbEach)}), login ${round1(loginS)} s, idle ${round2(idle)} % of one core`);
    return s;
  };

  try {
    await sleep(2000);
    log(`sessions: idle, empty daemon: ${round2(await idleCpu(10))} % of one core over 10 s`);
    empty = await memory('empty daemon');

    const result: Record<string, number> = {};
    const curve: Stage[] = [];
    for (const n of stages) {
      const first = n === stages[0];
      const s = await stage(n, first);
      curve.push(s);
      result[`curve_${n}_mb_each`] = round2(s.mbEach);
      result[`curve_${n}_heap_mb_each`] = round2(s.heapMbEach);
      result[`curve_${n}_login_s`] = round1(s.loginS);
      result[`curve_${n}_idle_cpu_pct`] = round2(s.idleCpu);
      result[`curve_${n}_settle_cpu_pct`] = round2(s.settleCpu);
      result[`curve_${n}_pair_s`] = round1(s.pairS);
      for (const l of s.loginAt) result[`curve_${n}_login_s_at_${l.connects}`] = round1(l.loginS);
      if (n === N && opts.onConnected) {
        const extra = await opts.onConnected({ url: base(), secret, dataDir, instances: instances.slice(0, n) });
        Object.assign(result, extra);
      }
      if (first) {
        const r = await reconnectRounds(n, true);
        Object.assign(result, {
          sessions_n: n,
          sessions_mb_each: round2(s.mbEach),
          sessions_heap_mb_each: round2(s.heapMbEach),
          sessions_login_s: round1(s.loginS),
          sessions_login_max_concurrent: s.loginMax,
          sessions_idle_cpu_pct: round2(s.idleCpu),
          sessions_settle_cpu_pct: round2(s.settleCpu),
          reconnect_heap_growth_pct: round1(r.growth),
          reconnect_round_s: round1(r.roundS),
          sessions_pair_s: round1(s.pairS),
        });
        if (pairing) Object.assign(result, pairing);
        // The same probe with nothing pairing: the reference the pairing figures are read against
        // (on a shared machine, compare these two, not a figure against its budget alone).
        if (n > 1) {
          const quiet = await startPairingLag({ base: base(), instanceId: instances[0]!.id, apiKey: instances[0]!.apiKey, to: PROBE_TO, log });
          await sleep(15_000);
          const q = await quiet.stop();
          Object.assign(result, { quiet_loop_lag_ms: q.pairing_loop_lag_ms, quiet_send_p99_ms: q.pairing_send_p99_ms, quiet_send_p50_ms: q.pairing_send_p50_ms });
          log(`sessions: the same sends with nothing pairing (15 s, ${n} idle sessions): daemon event loop lag up to ${q.pairing_loop_lag_ms} ms; p50 ${q.pairing_send_p50_ms} ms, p99 ${q.pairing_send_p99_ms} ms, ${q.pairing_send_failures} failed`);
        }
      }
      if (n === 5000) {
        const r = first ? { growth: result.reconnect_heap_growth_pct!, roundS: result.reconnect_round_s! } : await reconnectRounds(n, false);
        Object.assign(result, {
          sessions5k_mb_each: round2(s.mbEach),
          sessions5k_heap_mb_each: round2(s.heapMbEach),
          sessions5k_login_s: round1(s.loginS),
          sessions5k_login_max_concurrent: s.loginMax,
          sessions5k_idle_cpu_pct: round2(s.idleCpu),
          sessions5k_settle_cpu_pct: round2(s.settleCpu),
          reconnect5k_heap_growth_pct: round1(r.growth),
          reconnect5k_round_s: round1(r.roundS),
        });
      }
    }
    // The growth curve: per session cost at each size, so a reader sees whether it is linear.
    log('sessions: growth curve (n: MB each, heap MB each, login s, idle % of one core, settle %):');
    for (const s of curve) log(`sessions:   ${s.n}: ${round2(s.mbEach)} MB, ${round2(s.heapMbEach)} MB heap, ${round1(s.loginS)} s, ${round2(s.idleCpu)} %, ${round2(s.settleCpu)} %`);
    const errors = await double.errors();
    if (errors.count > 0) log(`sessions: ${errors.count} double errors, first: ${JSON.stringify(errors.first.slice(0, 3))}`);
    return result as SessionsResult;
  } catch (err) {
    // What the daemon said last, and why a fetch failed (undici hides it in `cause`).
    const cause = err instanceof Error && err.cause instanceof Error ? ` (cause: ${err.cause.message})` : '';
    log(`sessions: failed${cause}; the daemon ${gw.child.exitCode === null ? 'still runs' : `exited ${gw.child.exitCode ?? gw.child.signalCode}`}; its stderr ends with:\n${gw.stderr().slice(-3000)}`);
    throw err;
  } finally {
    disconnect();
    await gw.stop();
    await double.close();
    if (process.env.BENCH_SESSIONS_KEEP === '1') log(`sessions: data dir kept: ${dataDir}`);
    else await rm(dataDir, { recursive: true, force: true });
  }
}

// Alone: `node --import=tsx bench/sessions.ts` (after `npm run build`); BENCH_GATEWAY_BIN runs another build.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const bin = process.env.BENCH_GATEWAY_BIN ?? join(fileURLToPath(new URL('..', import.meta.url)), 'bin/gateway');
  sessionsBench(bin, (line) => process.stdout.write(`${line}\n`))
    .then((r) => {
      process.stdout.write(`${JSON.stringify(r)}\n`);
      process.exit(0);
    })
    .catch((err: unknown) => {
      process.stderr.write(`sessions bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    });
}
