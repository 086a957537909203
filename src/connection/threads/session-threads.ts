import type { Worker } from 'node:worker_threads';
import { pino, type DestinationStream, type Logger } from 'pino';
import { startWorker } from '../../domain/worker-thread.js';
import { GatewayError, errorMessage } from '../../domain/errors.js';
import type { InstanceRecord } from '../../schemas/instance.js';
import type { BaileysOptions, ConnectSettings } from '../baileys/options.js';
import type { AuthSnapshot } from '../../storage/ports/auth-state.js';
import { LoginGate } from '../baileys/login-gate.js';
import type { ConnectionFactory, ConnectionHooks, InboundMedia, SessionThreadStats, StatusChange } from '../types.js';
import { Endpoint, type WireMessage } from './rpc.js';
import { isHookCall, type ConnectionCall } from './calls.js';
import { RemoteConnection, type Placement } from './remote-connection.js';
import { daemonPreloads } from './preloads.js';
import type { CallAnswer, RemoteMedia, RemoteState, SessionThreadData, WireSnapshot } from './wire-types.js';

/**
 * Baileys sessions on threads of their own (`baileys.sessionThreads` > 0).
 *
 * Why: every session's sockets, Signal state and history syncs live on the heap of the thread that
 * runs them. In the daemon's own thread, a thousand sessions made a heap of ~1.5 GB whose
 * collections (young-generation copies of 7 to 13 MB while phones paired and synced, full
 * collections whose final pause frees tens of thousands of native objects) stopped the event loop
 * for 160 to 260 ms at a time (`pairing_loop_lag_ms` in `npm run bench`): every instance's API
 * calls and webhooks waited that long. On threads, each collects its own heap without stopping
 * the daemon's: the HTTP API, the stores, the webhooks and the panel stay on a small heap.
 *
 * What stays in the daemon's thread: the credentials store (each thread asks it across the port,
 * a whole state at connect and a snapshot a write), the login gate (logins in flight counted over
 * every thread), each instance's settings (asked at every connect), the hooks that store and
 * publish what arrives (a received message's media is downloaded through its thread before the
 * hook answers), and the log (each thread's lines are written to the daemon's log as they come).
 *
 * A thread that stops (a crash) is replaced at once; its connections are reported disconnected and
 * those that were running start again on the new thread, unless threads stopped more than
 * MAX_CRASHES times within CRASH_WINDOW_MS (then they give up, and `start` brings each back).
 */
const MAX_CRASHES = 3;
/**
 * Session threads run at a lower priority than the daemon's thread (nice 0 + this): on a busy
 * host the API's requests, the stores' writes and the webhooks go first (see README, Performance).
 */
export const SESSION_THREAD_NICE = 10;
const CRASH_WINDOW_MS = 60_000;

export interface SessionThreadOptions {
  /** How many threads (sessions are spread over them, each new one on the least loaded). */
  threads: number;
  /** The threads' nice value above the daemon's (default SESSION_THREAD_NICE). */
  nice?: number;
  /** Modules each thread imports before Baileys, besides the daemon's own `--import` preloads (a test's protocol-double preload). */
  preloads?: readonly string[];
}

/** A factory of connections that run on session threads; `close()` ends the threads (after every connection stopped). */
export function createThreadedConnectionFactory(options: BaileysOptions, threads: SessionThreadOptions): ConnectionFactory & { stopThread(index: number): Promise<void> } {
  const pool = new SessionThreads(options, threads);
  const factory: ConnectionFactory = (record, hooks) => pool.connection(record, hooks);
  factory.close = () => pool.close();
  factory.threads = () => pool.stats();
  return Object.assign(factory, {
    /** Ends thread `index` as a crash would (its connections move to a new one): for tests and diagnosis. */
    stopThread: (index: number) => pool.stopThread(index),
  });
}

interface Thread {
  readonly index: number;
  readonly worker: Worker;
  readonly endpoint: Endpoint;
  readonly connections: Map<number, WeakRef<RemoteConnection>>;
  /** Login places held by the thread's connections, by token (given back if the thread stops). */
  readonly places: Map<number, () => void>;
  alive: boolean;
}

class SessionThreads {
  private readonly threads: Thread[] = [];
  private readonly gate: LoginGate;
  private readonly log: Logger;
  private readonly lines: DestinationStream | null;
  private nextHandle = 1;
  private nextPlace = 1;
  private closing = false;
  private crashes: number[] = [];
  private replaced = 0;
  /** A connection the daemon no longer holds is forgotten by its thread too. */
  private readonly dropped = new FinalizationRegistry<{ thread: Thread; handle: number }>(({ thread, handle }) => {
    thread.connections.delete(handle);
    if (thread.alive) thread.endpoint.note('drop', [handle]);
  });

  constructor(
    private readonly options: BaileysOptions,
    private readonly config: SessionThreadOptions,
  ) {
    if (!Number.isInteger(config.threads) || config.threads < 1) throw new RangeError(`threads must be a positive integer, got ${config.threads}`);
    this.gate = options.loginGate instanceof LoginGate ? options.loginGate : new LoginGate(options.settings.maxConcurrentLogins ?? 16);
    this.log = options.logger.child({ component: 'session-threads' });
    this.lines = streamOf(options.logger);
    for (let i = 0; i < config.threads; i++) this.threads.push(this.spawn(i));
  }

  connection(record: InstanceRecord, hooks: ConnectionHooks): RemoteConnection {
    const thread = this.leastLoaded();
    let made: RemoteConnection | null = null;
    const placement = this.place(record, thread, () => made);
    made = new RemoteConnection(record.id, record, hooks, placement.placement);
    this.adopt(made, thread, placement.handle);
    return made;
  }

  stats(): SessionThreadStats {
    return { running: this.threads.filter((t) => t.alive).length, replaced: this.replaced, connections: this.threads.map((t) => t.connections.size) };
  }

  async stopThread(index: number): Promise<void> {
    const thread = this.threads[index];
    if (!thread) throw new RangeError(`no session thread ${index}`);
    await thread.worker.terminate();
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.allSettled(this.threads.map((t) => t.worker.terminate()));
  }

  private leastLoaded(): Thread {
    let best = this.threads[0]!;
    for (const t of this.threads) if (t.connections.size < best.connections.size) best = t;
    return best;
  }

  /** Makes the connection on `thread` (a call sent now: what follows on the port comes after it). */
  private place(record: InstanceRecord, thread: Thread, self: () => RemoteConnection | null): { placement: Placement; handle: number } {
    const handle = this.nextHandle++;
    const epoch = this.options.leaseEpoch?.(record.id) ?? null;
    thread.endpoint.call<RemoteState>('create', [handle, record, epoch]).then(
      (state) => self()?.mirror(state),
      (err: unknown) => this.log.error({ err: errorMessage(err), instanceId: record.id }, 'a session thread could not make a connection'),
    );
    const placement: Placement = {
      call: async <T>(method: ConnectionCall, args: unknown[]): Promise<T> => {
        const answer = await thread.endpoint.call<CallAnswer>('call', [handle, method, args]);
        self()?.mirror(answer.state);
        return answer.value as T;
      },
      start: () => thread.endpoint.note('start', [handle]),
    };
    return { placement, handle };
  }

  private adopt(connection: RemoteConnection, thread: Thread, handle: number): void {
    thread.connections.set(handle, new WeakRef(connection));
    this.dropped.unregister(connection);
    this.dropped.register(connection, { thread, handle }, connection);
  }

  private connectionOf(thread: Thread, handle: unknown): RemoteConnection | null {
    return (typeof handle === 'number' ? thread.connections.get(handle)?.deref() : undefined) ?? null;
  }

  private spawn(index: number): Thread {
    const data: SessionThreadData = {
      preloads: [...daemonPreloads(), ...(this.config.preloads ?? [])],
      logLevel: this.options.logger.level,
      nice: this.config.nice ?? SESSION_THREAD_NICE,
      settings: this.options.settings,
      ...(this.options.authDebounceMs !== undefined ? { authDebounceMs: this.options.authDebounceMs } : {}),
      ...(this.options.pairingTimeoutMs !== undefined ? { pairingTimeoutMs: this.options.pairingTimeoutMs } : {}),
    };
    const worker = startWorker(import.meta.url, 'session-worker', { workerData: data, name: `sessions-${index}` });
    const thread: Thread = { index, worker, endpoint: new Endpoint(worker), connections: new Map(), places: new Map(), alive: true };
    this.handle(thread);
    worker.on('message', (m: WireMessage) => thread.endpoint.receive(m));
    worker.on('error', (err) => this.log.error({ err: errorMessage(err), thread: index }, 'a session thread failed'));
    worker.on('exit', (code) => this.exited(thread, code));
    return thread;
  }

  /** What a thread asks of the daemon. */
  private handle(thread: Thread): void {
    const { auth } = this.options;
    thread.endpoint
      .on('log', (line: string) => {
        if (this.lines) this.lines.write(line);
      })
      .on('status', (handle: number, change: StatusChange, state: RemoteState | null) => {
        const c = this.connectionOf(thread, handle);
        if (!c) return;
        c.mirror(state);
        guard(this.log, c.instanceId, 'onStatus', () => c.hooks.onStatus(change));
      })
      .on('qr', (handle: number, qr: string, state: RemoteState | null) => {
        const c = this.connectionOf(thread, handle);
        if (!c) return;
        c.mirror(state);
        guard(this.log, c.instanceId, 'onQr', () => c.hooks.onQr(qr));
      })
      .on('state', (handle: number, state: RemoteState) => this.connectionOf(thread, handle)?.mirror(state))
      .on('hook', (handle: number, name: unknown, args: unknown[]) => {
        const c = this.connectionOf(thread, handle);
        if (!c) throw new Error('the connection is gone');
        if (!isHookCall(name)) throw new Error(`not a hook: ${String(name)}`);
        const hooks = c.hooks;
        switch (name) {
          case 'onMessage': {
            const [message, media, extra] = args as Parameters<ConnectionHooks['onMessage']>;
            const described = media as RemoteMedia | undefined;
            return hooks.onMessage(message, described ? this.inboundMedia(thread, handle, described) : undefined, extra);
          }
          case 'onUpdate':
            return hooks.onUpdate(...(args as Parameters<ConnectionHooks['onUpdate']>));
          case 'onEvent':
            return hooks.onEvent?.(...(args as Parameters<NonNullable<ConnectionHooks['onEvent']>>));
          case 'pollOf':
            return hooks.pollOf ? hooks.pollOf(...(args as Parameters<NonNullable<ConnectionHooks['pollOf']>>)) : null;
          case 'onLabel':
            return hooks.onLabel?.(...(args as Parameters<NonNullable<ConnectionHooks['onLabel']>>));
        }
      })
      .on('auth.read', (id: string) => auth.read(id))
      .on('auth.write', (id: string, snapshot: WireSnapshot, options: { epoch?: number }) => auth.write(id, fromWire(snapshot), options))
      .on('auth.remove', (id: string) => auth.remove(id))
      .on('auth.isPaired', (id: string) => auth.isPaired(id))
      .on('settings', async (id: string): Promise<ConnectSettings> => (await this.options.connectSettings?.(id)) ?? { proxy: null, syncFullHistory: false, alwaysOnline: false })
      .on('gate.acquire', async () => {
        const release = await this.gate.acquire();
        if (!thread.alive) {
          release();
          throw new Error('the session thread stopped');
        }
        const token = this.nextPlace++;
        thread.places.set(token, release);
        return token;
      })
      .on('gate.release', (token: number) => {
        thread.places.get(token)?.();
        thread.places.delete(token);
      });
  }

  private inboundMedia(thread: Thread, handle: number, media: RemoteMedia): InboundMedia {
    return {
      mimetype: media.mimetype,
      ...(media.fileName !== undefined ? { fileName: media.fileName } : {}),
      ...(media.declaredSize !== undefined ? { declaredSize: media.declaredSize } : {}),
      ...(media.kind !== undefined ? { kind: media.kind } : {}),
      download: () => thread.endpoint.call<Uint8Array>('download', [handle, media.token]),
    };
  }

  /** A thread stopped: unless the daemon is closing, a new one takes its place and its connections. */
  private exited(thread: Thread, code: number): void {
    if (!thread.alive) return;
    thread.alive = false;
    const why = `the session thread stopped (exit code ${code})`;
    thread.endpoint.close(new GatewayError('CONNECTION_NOT_READY', `${why}; its connections start again on a new one`));
    for (const release of thread.places.values()) release();
    thread.places.clear();
    if (this.closing) return;
    const now = Date.now();
    this.crashes = [...this.crashes.filter((t) => now - t < CRASH_WINDOW_MS), now];
    const restart = this.crashes.length <= MAX_CRASHES;
    this.log.error({ thread: thread.index, code, connections: thread.connections.size, restart }, restart ? 'a session thread stopped; a new one takes its connections' : 'session threads keep stopping; their connections wait for a start');
    const replacement = this.spawn(thread.index);
    this.replaced += 1;
    this.threads[this.threads.indexOf(thread)] = replacement;
    for (const ref of thread.connections.values()) {
      const c = ref.deref();
      if (!c) continue;
      const placed = this.place(c.record, replacement, () => c);
      this.adopt(c, replacement, placed.handle);
      c.lost(placed.placement, why, restart);
    }
    thread.connections.clear();
  }
}

/** Runs a hook the way connections do: a throwing hook is logged, never passed on. */
function guard(log: Logger, instanceId: string, name: string, run: () => void): void {
  try {
    run();
  } catch (err) {
    log.error({ err: errorMessage(err), instanceId }, `${name} hook threw`);
  }
}

/** The stream the daemon's logger writes to: a thread's lines (pino's JSON, same options) go there as they are. */
function streamOf(logger: Logger): DestinationStream | null {
  const stream = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym];
  return stream && typeof (stream as DestinationStream).write === 'function' ? (stream as DestinationStream) : null;
}

const decoder = new TextDecoder();

/** A snapshot from a session thread: its tables' bytes as they came, their text only if an engine asks. */
function fromWire(snapshot: WireSnapshot): AuthSnapshot {
  return {
    creds: snapshot.creds,
    paired: snapshot.paired,
    tables: snapshot.tables.map((t) => {
      let text: string | null = null;
      return { type: t.type, changed: t.changed, bytes: () => t.bytes, json: () => (text ??= decoder.decode(t.bytes)) };
    }),
  };
}
