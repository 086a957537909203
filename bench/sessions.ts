/**
 * Sessions (issue 17): N real WhatsApp instances (Baileys, non-sandbox) in ONE built daemon, a
 * child process, against the protocol double in this process, every account realistic
 * (`accountData: 'realistic'`: history of 200 chats / 2,000 messages, 300 contacts, 5 groups with
 * sender keys, app-state snapshots and patches). Measured:
 *
 * - `sessions_mb_each`: RSS of the daemon with N connected sessions minus RSS of the same daemon
 *   empty, divided by N (after a full GC, through the inspector); the larger of right after pairing
 *   and after a restart. `sessions_heap_mb_each`: the same for the V8 heap.
 * - `sessions_login_s`: seconds from spawning the daemon again (same data dir) until all N are
 *   connected (its `gateway_connections{status="connected"}` gauge); the double records how many
 *   logins were in flight at once (`sessions_login_max_concurrent`).
 * - `sessions_idle_cpu_pct`: CPU time of the daemon over BENCH_SESSIONS_IDLE_S (30) seconds with N
 *   idle sessions (keepalives only), in % of one core, once the logins have settled:
 *   `sessions_settle_cpu_pct` is the CPU of the BENCH_SESSIONS_SETTLE_S (60) seconds before it,
 *   right after the last login.
 * - `reconnect_heap_growth_pct`: heap after round R (10) of the double dropping every connection
 *   and all N logging in again, against the heap after round 1.
 *
 * BENCH_SESSIONS sets N (default 1000), BENCH_SESSIONS_ROUNDS the rounds, BENCH_SESSIONS_SNAPSHOTS
 * a directory for heap snapshots (after pairing, after round 1, after the last round).
 * Run alone: `npm run build && node --import=tsx bench/sessions.ts`.
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { childPreloadEnv } from '../test/protocol-double/index.js';
import { mediaTrustEnv } from '../test/protocol-double/media.js';
import { ProtocolDouble, type Device, type Session } from '../test/protocol-double/server.js';
import { cpuSeconds, initDataDir, Inspector, promValue, rssMb, startDaemon, type DaemonProc } from './lib.js';

export interface SessionsResult {
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

const MB = 1024 * 1024;
const round1 = (n: number): number => Math.round(n * 10) / 10;
const round2 = (n: number): number => Math.round(n * 100) / 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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

/** Runs `work(i)` for i in [0, n) with at most `concurrency` at once. */
async function pool(n: number, concurrency: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(n, concurrency) }, async () => {
    for (let i = next++; i < n; i = next++) await work(i);
  }));
}

/** Most sessions in [startedAt, succeededAt] at once: logins in flight. */
function maxConcurrentLogins(sessions: Session[]): number {
  const edges: Array<[number, number]> = [];
  for (const s of sessions) {
    if (s.kind !== 'login') continue;
    const end = s.succeededAt ?? s.closedAt ?? Date.now();
    edges.push([s.startedAt, 1], [end, -1]);
  }
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let max = 0;
  for (const [, d] of edges) max = Math.max(max, (now += d));
  return max;
}

export async function sessionsBench(bin: string, log: (line: string) => void): Promise<SessionsResult> {
  const N = Number(process.env.BENCH_SESSIONS ?? 1000);
  const ROUNDS = Number(process.env.BENCH_SESSIONS_ROUNDS ?? 10);
  const IDLE_S = Number(process.env.BENCH_SESSIONS_IDLE_S ?? 30);
  const SETTLE_S = Number(process.env.BENCH_SESSIONS_SETTLE_S ?? 60);
  const PAIR_CONCURRENCY = Number(process.env.BENCH_SESSIONS_PAIR_CONCURRENCY ?? 8);
  const snapshots = process.env.BENCH_SESSIONS_SNAPSHOTS;
  const profiles = process.env.BENCH_SESSIONS_PROFILES;

  const double = await ProtocolDouble.start({ accountData: 'realistic', recordStanzas: false });
  const { dataDir, secret } = await initDataDir(bin, (c) => {
    c.baileys.webSocketUrl = double.url;
    c.baileys.logLevel = 'warn';
  });
  const env = { ...childPreloadEnv(), ...mediaTrustEnv(double.media.hostname) };
  const nodeArgs = process.env.BENCH_SESSIONS_NODE_ARGS ? process.env.BENCH_SESSIONS_NODE_ARGS.split(' ') : [];
  let gw: DaemonProc = await startDaemon(bin, dataDir, { env, inspect: true, nodeArgs });
  // Connected only to measure memory and profile: idle CPU is measured with no inspector client.
  let inspector: Inspector | null = null;
  const insp = async (): Promise<Inspector> => (inspector ??= await Inspector.connect(gw.inspectorUrl!));
  const disconnect = () => {
    inspector?.close();
    inspector = null;
  };
  const base = () => `http://127.0.0.1:${gw.port}`;
  const metrics = async () => (await fetch(`${base()}/metrics`)).text();
  const connected = async () => promValue(await metrics(), 'gateway_connections{status="connected"}');
  const memory = async (label: string) => {
    const m = await (await insp()).memoryAfterGc();
    const rss = await rssMb(gw.child.pid!);
    log(`sessions: ${label}: heap ${round1(m.heapUsed / MB)} MiB, external ${round1(m.external / MB)} MiB, rss ${rss} MiB`);
    return { heap: m.heapUsed / MB, rss };
  };
  /** CPU profile of the daemon over `seconds` (BENCH_SESSIONS_PROFILES=dir), for DevTools or a .cpuprofile reader. */
  const profile = async (name: string, seconds: number) => {
    if (!profiles) return;
    const i = await insp();
    await i.send('Profiler.enable');
    await i.send('Profiler.start');
    await sleep(seconds * 1000);
    const { profile: data } = await i.send<{ profile: unknown }>('Profiler.stop');
    const file = join(profiles, `sessions-${name}.cpuprofile`);
    await writeFile(file, JSON.stringify(data));
    log(`sessions: CPU profile ${file}`);
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

  try {
    await sleep(2000);
    log(`sessions: idle, empty daemon: ${round2(await idleCpu(10))} % of one core over 10 s`);
    const empty = await memory('empty daemon');

    // ---- pair N instances, each a realistic account ----------------------------------------
    if (profiles) {
      await (await insp()).send('Profiler.enable');
      await (await insp()).send('Profiler.start');
    }
    const pairStarted = performance.now();
    const devices: Device[] = [];
    const api = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
      const res = await fetch(`${base()}${path}`, { method, headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
    };
    await pool(N, PAIR_CONCURRENCY, async (i) => {
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
      devices.push(device);
      if (devices.length % 100 === 0 || devices.length === N) {
        const lag = promValue(await metrics(), 'nodejs_eventloop_lag_max_seconds');
        log(`sessions: ${devices.length}/${N} paired and synced (${round1((performance.now() - pairStarted) / 1000)} s; daemon event loop lag up to ${round2(lag)} s since the last report)`);
      }
    });
    const pairS = (performance.now() - pairStarted) / 1000;
    if (profiles) {
      const { profile: data } = await (await insp()).send<{ profile: unknown }>('Profiler.stop');
      await writeFile(join(profiles, 'sessions-pairing.cpuprofile'), JSON.stringify(data));
      log(`sessions: CPU profile ${join(profiles, 'sessions-pairing.cpuprofile')}`);
    }
    await until(async () => (await connected()) === N || undefined, 60_000, `all ${N} connected`);
    if (double.errors.length > 0) log(`sessions: double errors: ${JSON.stringify(double.errors.slice(0, 5))}`);
    await sleep(10_000); // Baileys finishes processing history and app state in the background
    const paired = await memory(`${N} sessions after pairing`);
    await snapshot('paired');

    // ---- restart: all N log in again, staggered ---------------------------------------------
    disconnect();
    await gw.stop();
    const sessionsBefore = double.sessions.length;
    gw = await startDaemon(bin, dataDir, { env, inspect: true, nodeArgs });
    const spawnedAt = gw.spawnedAt;
    if (profiles) {
      await (await insp()).send('Profiler.enable');
      await (await insp()).send('Profiler.start');
    }
    await until(async () => (await connected()) === N || undefined, 600_000, `all ${N} connected after the restart`, 100);
    const loginS = (performance.now() - spawnedAt) / 1000;
    if (profiles) {
      const { profile: data } = await (await insp()).send<{ profile: unknown }>('Profiler.stop');
      await writeFile(join(profiles, 'sessions-restart.cpuprofile'), JSON.stringify(data));
      log(`sessions: CPU profile ${join(profiles, 'sessions-restart.cpuprofile')} (the logins measured with the profiler on)`);
      disconnect();
    }
    const loginMax = maxConcurrentLogins(double.sessions.slice(sessionsBefore));
    log(`sessions: restart: ${N} connected ${round1(loginS)} s after the daemon was spawned (start-up ${gw.startupMs} ms); at most ${loginMax} logins in flight at once`);

    // ---- idle ---------------------------------------------------------------------------------
    // The first minute after a login storm is not idle: Baileys finishes each login in the
    // background (pre-key and props queries, its 20 s wait for a history sync, buffered events
    // flushed), and V8 collects what the logins left. Its CPU is logged in 10 s windows (and
    // profiled with BENCH_SESSIONS_PROFILES) and reported as `sessions_settle_cpu_pct`; idle is
    // measured after it.
    const settleWindows: number[] = [];
    if (profiles) {
      await (await insp()).send('Profiler.enable');
      await (await insp()).send('Profiler.start');
    }
    for (let w = 0; w < SETTLE_S / 10; w++) settleWindows.push(await idleCpu(10));
    if (profiles) {
      const { profile: data } = await (await insp()).send<{ profile: unknown }>('Profiler.stop');
      await writeFile(join(profiles, 'sessions-settle.cpuprofile'), JSON.stringify(data));
      log(`sessions: CPU profile ${join(profiles, 'sessions-settle.cpuprofile')}`);
      disconnect();
    }
    log(`sessions: the first ${SETTLE_S} s after the logins, % of one core per 10 s: ${settleWindows.map(round1).join(', ')}`);
    const idle = await idleCpu(IDLE_S);
    log(`sessions: idle: ${round2(idle)} % of one core over ${IDLE_S} s with ${N} sessions`);
    await profile('idle', IDLE_S);
    if (process.env.BENCH_SESSIONS_HOLD_S) {
      log(`sessions: holding ${process.env.BENCH_SESSIONS_HOLD_S} s for a look at pid ${gw.child.pid}`);
      await sleep(Number(process.env.BENCH_SESSIONS_HOLD_S) * 1000);
    }
    const restarted = await memory(`${N} sessions after a restart`);

    // ---- drop and reconnect every session, ROUNDS times ----------------------------------------
    const heaps: number[] = [];
    const roundTimes: number[] = [];
    for (let r = 1; r <= ROUNDS; r++) {
      const from = double.sessions.length;
      const profiling = profiles && r === 1;
      if (profiling) {
        await (await insp()).send('Profiler.enable');
        await (await insp()).send('Profiler.start');
      }
      const started = performance.now();
      double.drop();
      await until(async () => {
        const fresh = double.sessions.slice(from).filter((s) => s.succeeded && !s.closed).length;
        return fresh >= N && (await connected()) === N ? true : undefined;
      }, 600_000, `round ${r}: all ${N} connected again`, 100);
      const seconds = (performance.now() - started) / 1000;
      roundTimes.push(seconds);
      if (profiling) {
        const { profile: data } = await (await insp()).send<{ profile: unknown }>('Profiler.stop');
        await writeFile(join(profiles, 'sessions-reconnect.cpuprofile'), JSON.stringify(data));
        log(`sessions: CPU profile ${join(profiles, 'sessions-reconnect.cpuprofile')}`);
      }
      await sleep(3000);
      const m = await memory(`reconnect round ${r} (${round1(seconds)} s, at most ${maxConcurrentLogins(double.sessions.slice(from))} logins at once)`);
      heaps.push(m.heap);
      if (r === 1) await snapshot('round1');
      if (r === ROUNDS) await snapshot(`round${r}`);
    }
    const growth = heaps.length > 1 ? ((heaps[heaps.length - 1]! - heaps[0]!) / heaps[0]!) * 100 : 0;
    if (double.errors.length > 0) log(`sessions: ${double.errors.length} double errors, first: ${JSON.stringify(double.errors.slice(0, 3))}`);

    const each = Math.max(paired.rss - empty.rss, restarted.rss - empty.rss) / N;
    const heapEach = Math.max(paired.heap - empty.heap, restarted.heap - empty.heap) / N;
    return {
      sessions_n: N,
      sessions_mb_each: round2(each),
      sessions_heap_mb_each: round2(heapEach),
      sessions_login_s: round1(loginS),
      sessions_login_max_concurrent: loginMax,
      sessions_idle_cpu_pct: round2(idle),
      sessions_settle_cpu_pct: round2(settleWindows.reduce((a, b) => a + b, 0) / Math.max(1, settleWindows.length)),
      reconnect_heap_growth_pct: round1(growth),
      reconnect_round_s: round1(roundTimes.reduce((a, b) => a + b, 0) / Math.max(1, roundTimes.length)),
      sessions_pair_s: round1(pairS),
    };
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
