/**
 * The protocol double in a child process of its own, driven over IPC. A benchmark that measures a
 * daemon's CPU on a shared 2-core machine cannot host the double in the measuring process's event
 * loop either: thousands of realistic accounts (history, app state, decryption of every send) cost
 * the double as much CPU as the daemon, and the two would steal each other's turns. Here the
 * double's CPU is its own process's, and the parent only sends small commands.
 *
 * Parent side: `const double = await DoubleProcess.start({ accountData: 'realistic' })`, then
 * `scan(qr, options)` (resolves with the device's key), `synced(key, ms)`, `drop()`, `logins(from)`,
 * `errors()`, `contact(phone)`, `close()`. Devices stay in the child and are named by their key.
 * Child side: this file run as a forked module (`process.send` present) hosts one ProtocolDouble.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { installCachedAgreement } from '../../src/connection/baileys/agreement-keys.js';
import { installCurveSign } from '../../src/connection/baileys/curve-sign.js';
import type { AccountDataOption } from './account-data.js';
import type { ProtocolDoubleOptions, Session } from './server.js';

/** The options that cross the process boundary (no functions: `log` and friends stay out). */
export interface DoubleProcessOptions {
  refs?: number;
  phone?: string;
  assumedPreKeys?: number;
  sendOffline?: boolean;
  initialSync?: boolean;
  accountData?: AccountDataOption;
  recordStanzas?: boolean;
}

export interface ScanOptions {
  phone?: string;
  answerMs?: number;
  accountData?: AccountDataOption;
}

/** What `logins(from)` reports about the sessions opened since index `from`. */
export interface LoginStats {
  /** Sessions (WebSocket connections) accepted so far, all of them: the next `from`. */
  sessions: number;
  /** Sessions since `from` that reached `<success/>` and are still open. */
  connected: number;
  /** Most logins since `from` in flight at once (from accept to `<success/>` or close). */
  maxConcurrent: number;
}

export interface DoubleErrors {
  count: number;
  first: Array<{ at: number; what: string }>;
}

/** Every command the child answers: name -> [arguments, result]. */
interface Commands {
  info: [[], { url: string; mediaHost: string }];
  scan: [[qr: string, options: ScanOptions], string];
  synced: [[deviceKey: string, ms: number], null];
  drop: [[], number];
  logins: [[from: number], LoginStats];
  errors: [[], DoubleErrors];
  contact: [[phone: string], string];
  close: [[], null];
}
type Command = keyof Commands;
interface Request { id: number; cmd: Command; args: unknown[] }
type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };

/** Most sessions in [startedAt, succeededAt or closedAt] at once: logins in flight. */
export function maxConcurrentLogins(sessions: Session[]): number {
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

const THIS_FILE = fileURLToPath(import.meta.url);

export class DoubleProcess {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private exited: Error | null = null;

  private constructor(
    readonly child: ChildProcess,
    /** What to put in `baileys.webSocketUrl`. */
    readonly url: string,
    /** The media host's name, for `mediaTrustEnv()`. */
    readonly mediaHost: string,
  ) {
    child.on('message', (m: Reply) => {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (m.ok) p?.resolve(m.value);
      else p?.reject(new Error(`double process: ${m.error}`));
    });
    child.on('exit', (code, signal) => {
      this.exited = new Error(`the double process exited (${code ?? signal})`);
      for (const p of this.pending.values()) p.reject(this.exited);
      this.pending.clear();
    });
  }

  /**
   * Forks this file under tsx with the double's options. `maxOldSpaceMb` raises the child's heap
   * limit: five thousand realistic accounts hold more than V8's default. `nice`: see below.
   */
  static async start(options: DoubleProcessOptions = {}, { maxOldSpaceMb = 8192, nice = Number(process.env.DOUBLE_NICE ?? 0) }: { maxOldSpaceMb?: number; nice?: number } = {}): Promise<DoubleProcess> {
    const child = fork(THIS_FILE, [JSON.stringify(options)], {
      // DOUBLE_NODE_ARGS: more node flags for the double alone (to profile it: a preload, --cpu-prof).
      execArgv: ['--import=tsx', `--max-old-space-size=${maxOldSpaceMb}`, ...(process.env.DOUBLE_NODE_ARGS ? process.env.DOUBLE_NODE_ARGS.split(' ') : [])],
      // Not the parent's NODE_OPTIONS (a preload or --inspect meant for the daemon).
      env: { ...process.env, NODE_OPTIONS: '' },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const ready = await new Promise<{ url: string; mediaHost: string }>((resolve, reject) => {
      child.once('message', (m: { ready?: { url: string; mediaHost: string }; error?: string }) => (m.ready ? resolve(m.ready) : reject(new Error(`double process: ${m.error}`))));
      child.once('exit', (code) => reject(new Error(`the double process exited during start (${code})`)));
    });
    // `nice` (or DOUBLE_NICE): the double's threads run at that nice value (it stands in for
    // WhatsApp's servers, which do not share the daemon's cores in production; on the bench's 2
    // cores it otherwise takes the daemon's CPU whenever it is busy).
    if (nice > 0 && child.pid !== undefined) await renice(child.pid, nice);
    return new DoubleProcess(child, ready.url, ready.mediaHost);
  }

  private call<C extends Command>(cmd: C, ...args: Commands[C][0]): Promise<Commands[C][1]> {
    if (this.exited) return Promise.reject(this.exited);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.child.send({ id, cmd, args } satisfies Request);
    });
  }

  /** The phone scans `qr`; resolves with the new device's key once Baileys answered pair-success. */
  scan(qr: string, options: ScanOptions = {}): Promise<string> {
    return this.call('scan', qr, options);
  }

  /** Resolves once the device acknowledged its initial sync and fetched every collection (see ProtocolDouble.synced). */
  async synced(deviceKey: string, ms = 10_000): Promise<void> {
    await this.call('synced', deviceKey, ms);
  }

  /** Drops every open connection without a close frame; resolves with how many. */
  drop(): Promise<number> {
    return this.call('drop');
  }

  logins(from = 0): Promise<LoginStats> {
    return this.call('logins', from);
  }

  errors(): Promise<DoubleErrors> {
    return this.call('errors');
  }

  /** Makes `phone` a contact with WhatsApp (one Signal device) that decrypts what it is sent; resolves with its number. */
  contact(phone: string): Promise<string> {
    return this.call('contact', phone);
  }

  /** Closes the double and waits for the process to end. */
  async close(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    await this.call('close').catch(() => undefined);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}

// ---- child side ----------------------------------------------------------------------------------

async function serve(options: DoubleProcessOptions): Promise<void> {
  const { ProtocolDouble } = await import('./server.js');
  const double = await ProtocolDouble.start(options satisfies ProtocolDoubleOptions);
  // The parent gone mid-answer (EPIPE): exit quietly instead of crashing on an 'error' event.
  const send = (m: unknown) => {
    if (process.connected) process.send!(m, undefined, undefined, (err: Error | null) => err && process.exit(0));
  };
  const device = (key: string) => {
    const d = double.devices.get(key);
    if (!d) throw new Error(`no device ${key}`);
    return d;
  };
  const handlers: { [C in Command]: (...args: Commands[C][0]) => Promise<Commands[C][1]> | Commands[C][1] } = {
    info: () => ({ url: double.url, mediaHost: double.media.hostname }),
    scan: async (qr, o) => (await double.scan(qr, o)).key,
    synced: async (key, ms) => {
      await double.synced(device(key), ms);
      return null;
    },
    drop: () => {
      const open = double.sessions.filter((s) => s.open);
      double.drop(open);
      return open.length;
    },
    logins: (from) => {
      const since = double.sessions.slice(from);
      return { sessions: double.sessions.length, connected: since.filter((s) => s.succeeded && !s.closed).length, maxConcurrent: maxConcurrentLogins(since) };
    },
    errors: () => ({ count: double.errors.length, first: double.errors.slice(0, 5) }),
    contact: async (phone) => (await double.contact(phone)).phone,
    close: async () => {
      await double.close();
      setImmediate(() => process.exit(0));
      return null;
    },
  };
  process.on('message', (req: Request) => {
    const handler = handlers[req.cmd] as (...args: unknown[]) => unknown;
    Promise.resolve()
      .then(() => handler(...req.args))
      .then(
        (value) => send({ id: req.id, ok: true, value } satisfies Reply),
        (err: unknown) => send({ id: req.id, ok: false, error: err instanceof Error ? err.message : String(err) } satisfies Reply),
      );
  });
  // The parent gone (killed, crashed): no orphan double keeps its ports.
  process.on('disconnect', () => process.exit(0));
  send({ ready: handlers.info() });
}

if (process.send && process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // The double's own CPU, not the daemon's: its contacts' signatures and key agreements go through
  // libsignal as the daemon's do, and with curve25519-js's JavaScript signing (8 ms a signature, one
  // per group message its members write) the double took a whole core while 300 accounts paired
  // (39 % of its samples in curve25519_sign, 16 % parsing X25519 keys from DER), left none to the
  // daemon's garbage collector threads on a 2-core machine, and answered in bursts. The daemon's
  // own replacements make the same bytes (test/unit/curve-sign.test.ts, agreement-keys.test.ts).
  // Its checks of the daemon's signatures stay curve25519-js's: an independent verifier.
  installCurveSign();
  installCachedAgreement();
  serve(JSON.parse(process.argv[2] ?? '{}') as DoubleProcessOptions).catch((err: unknown) => {
    process.send!({ error: err instanceof Error ? err.stack : String(err) });
    process.exit(1);
  });
}

/** Every thread of process `pid` at nice `nice` (Linux: a nice value is a thread's; threads made later inherit their maker's). */
async function renice(pid: number, nice: number): Promise<void> {
  const { readdir } = await import('node:fs/promises');
  const { setPriority } = await import('node:os');
  for (const tid of await readdir(`/proc/${pid}/task`).catch(() => [] as string[])) {
    try {
      setPriority(Number(tid), nice);
    } catch {
      // a thread that ended meanwhile
    }
  }
}
