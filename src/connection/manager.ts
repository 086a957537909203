import type { Logger } from 'pino';
import type { InstanceRecord } from '../schemas/instance.js';
import { RateWindow, SendQueue, type PacingSettings } from './send-queue.js';
import type { Connection, ConnectionFactory, ConnectionHooks, LogoutOutcome, StatusChange } from './types.js';

/** What an observer of one instance's connection hears (`gateway pair` follows a pairing). */
export type ConnectionObservation = { type: 'status'; change: StatusChange } | { type: 'qr'; qr: string };
export type ConnectionObserver = (event: ConnectionObservation) => void;

export interface ManagedConnection {
  readonly id: string;
  readonly connection: Connection;
  readonly queue: SendQueue;
  readonly rate: RateWindow;
}

export interface ManagerOptions {
  sandboxFactory: ConnectionFactory;
  /** Real WhatsApp connections, loaded on first use (the CLI rarely needs Baileys). */
  whatsappFactory: () => Promise<ConnectionFactory>;
  /** Turns a connection's reports into events (the daemon's event hub). */
  hooksFor: (id: string) => ConnectionHooks;
  logger: Logger;
  pacing: PacingSettings;
  sendsPerMinute: number;
  now: () => number;
  /** Connections opened at once by startAll(), so a restart never storms WhatsApp. */
  maxConcurrentConnects: number;
}

/**
 * Owns one connection per instance: opens them (at start, on create), follows them for observers,
 * and logs out and forgets deleted ones. In the CLI (no daemon) connections are opened only on
 * demand (`gateway pair`, `instance delete`).
 */
export class ConnectionManager {
  private readonly entries = new Map<string, ManagedConnection>();
  private readonly opening = new Map<string, Promise<ManagedConnection>>();
  private readonly observers = new Map<string, Set<ConnectionObserver>>();
  /** The one WhatsApp factory (its connections share a login gate): loaded once, however many connections are created at once. */
  private whatsapp: Promise<ConnectionFactory> | null = null;
  /** stopAll() was called (the daemon shuts down): nothing starts from now on. */
  private stopped = false;

  constructor(private readonly options: ManagerOptions) {}

  get(id: string): ManagedConnection | undefined {
    return this.entries.get(id);
  }

  all(): IterableIterator<ManagedConnection> {
    return this.entries.values();
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * Follows one instance's status and QR changes as they happen; returns the function that stops
   * following. A throwing observer is logged and never reaches the connection.
   */
  observe(id: string, observer: ConnectionObserver): () => void {
    let set = this.observers.get(id);
    if (!set) {
      set = new Set();
      this.observers.set(id, set);
    }
    set.add(observer);
    return () => {
      const current = this.observers.get(id);
      if (!current) return;
      current.delete(observer);
      if (current.size === 0) this.observers.delete(id);
    };
  }

  /** Tells the observers of `id` (called by the event hub for every connection report). */
  notify(id: string, event: ConnectionObservation): void {
    const set = this.observers.get(id);
    if (!set) return;
    for (const observer of [...set]) {
      try {
        observer(event);
      } catch (err) {
        this.options.logger.error({ err, instanceId: id }, 'connection observer threw');
      }
    }
  }

  /** The instance's connection, created (not started) if it has none yet. */
  async open(record: InstanceRecord): Promise<ManagedConnection> {
    const known = this.entries.get(record.id);
    if (known) return known;
    let pending = this.opening.get(record.id);
    if (!pending) {
      pending = this.create(record).finally(() => this.opening.delete(record.id));
      this.opening.set(record.id, pending);
    }
    return pending;
  }

  private async create(record: InstanceRecord): Promise<ManagedConnection> {
    let factory = this.options.sandboxFactory;
    if (!record.sandbox) {
      // The promise, not its result, is kept: startAll creates several connections concurrently,
      // and each awaiting its own load made one factory (and one login gate) per connection.
      this.whatsapp ??= this.options.whatsappFactory();
      try {
        factory = await this.whatsapp;
      } catch (err) {
        this.whatsapp = null;
        throw err;
      }
    }
    const connection = factory(record, this.options.hooksFor(record.id));
    const pacing = record.sandbox ? { minIntervalMs: 0, jitterMs: 0, maxWaitMs: 0 } : this.options.pacing;
    const entry: ManagedConnection = {
      id: record.id,
      connection,
      queue: new SendQueue(pacing, this.options.now),
      rate: new RateWindow(this.options.sendsPerMinute, this.options.now),
    };
    this.entries.set(record.id, entry);
    return entry;
  }

  /** Creates and starts the instance's connection (a new instance, `gateway pair`). */
  async start(record: InstanceRecord): Promise<ManagedConnection> {
    const entry = await this.open(record);
    // Created while the daemon stopped (loading Baileys takes a moment): started now, it would
    // reconnect forever in a daemon that no longer runs. stopAll() stops it instead.
    if (this.stopped) return entry;
    try {
      entry.connection.start();
    } catch (err) {
      this.options.logger.error({ err, instanceId: record.id }, 'connection failed to start');
    }
    return entry;
  }

  /**
   * Starts every instance's connection, at most `maxConcurrentConnects` connecting at once: the
   * next starts when one reached a settled status (connected, QR shown, disconnected) or after 10 s.
   */
  async startAll(records: Iterable<InstanceRecord>): Promise<void> {
    const queue = [...records];
    const workers = Array.from({ length: Math.min(this.options.maxConcurrentConnects, queue.length) }, async () => {
      for (let record = queue.shift(); record && !this.stopped; record = queue.shift()) {
        const entry = await this.start(record);
        await this.settled(entry, 10_000);
      }
    });
    await Promise.all(workers);
  }

  private settled(entry: ManagedConnection, timeoutMs: number): Promise<void> {
    if (entry.connection.status !== 'initializing') return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      timer.unref();
      const stop = this.observe(entry.id, (e) => {
        if (e.type === 'status' && e.change.to !== 'initializing') done();
      });
      function done(): void {
        clearTimeout(timer);
        stop();
        resolve();
      }
    });
  }

  /** The instance is being deleted: log its device out, remove its credentials, forget it. */
  async remove(id: string, record: InstanceRecord | undefined, timeoutMs: number): Promise<LogoutOutcome | 'not-connected' | 'failed'> {
    let entry = this.entries.get(id);
    if (!entry && record) entry = await this.open(record);
    if (!entry) return 'not-connected';
    try {
      return await entry.connection.logout({ timeoutMs });
    } catch (err) {
      this.options.logger.warn({ err, instanceId: id }, 'logout of a deleted instance failed');
      return 'failed';
    } finally {
      this.entries.delete(id);
      this.observers.delete(id);
    }
  }

  /**
   * The instance moves to another node: its connection is stopped (credentials kept and flushed)
   * and forgotten here. Resolves once the socket is closed.
   */
  async release(id: string): Promise<void> {
    const entry = this.entries.get(id) ?? (await this.opening.get(id)?.catch(() => undefined));
    if (!entry) return;
    this.entries.delete(id);
    try {
      await entry.connection.stop();
    } catch (err) {
      this.options.logger.warn({ err, instanceId: id }, 'stopping a connection that moves to another node failed');
    }
  }

  /**
   * Shutdown: close every connection, keep credentials. Connections still being created (the first
   * waits for Baileys to load) are waited for and stopped too, and none starts after this.
   */
  async stopAll(): Promise<void> {
    this.stopped = true;
    await Promise.allSettled([...this.opening.values()]);
    await Promise.allSettled([...this.entries.values()].map((e) => e.connection.stop()));
    // Then what the WhatsApp factory runs besides them (its session threads).
    const factory = await this.whatsapp?.catch(() => null);
    await factory?.close?.().catch((err: unknown) => this.options.logger.warn({ err }, 'the WhatsApp connections did not close cleanly'));
  }
}
