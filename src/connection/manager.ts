import type { Logger } from 'pino';
import type { InstanceRecord } from '../domain/types.js';
import type { EventBus } from '../events/bus.js';
import { RateWindow, SendQueue, type PacingSettings } from './send-queue.js';
import type { Connection, ConnectionFactory, ConnectionHooks, StatusChange } from './types.js';

/** What an observer of one instance's connection hears (`gateway pair` follows a pairing). */
export type ConnectionObservation = { type: 'status'; change: StatusChange } | { type: 'qr'; qr: string };
export type ConnectionObserver = (event: ConnectionObservation) => void;

export interface ManagedConnection {
  readonly record: InstanceRecord;
  readonly connection: Connection;
  readonly queue: SendQueue;
  readonly rate: RateWindow;
}

export interface ManagerOptions {
  sandboxFactory: ConnectionFactory;
  /** Real WhatsApp connections; absent only in tests that use sandbox instances alone. */
  baileysFactory?: ConnectionFactory;
  bus: EventBus;
  logger: Logger;
  pacing: PacingSettings;
  sendsPerMinute: number;
  now: () => number;
  /**
   * Receives connection status changes to publish as `instance.status` (the plan-aware reporter);
   * without it they are published as they are.
   */
  reportStatus?: (id: string, change: StatusChange) => void;
}

/**
 * Owns one connection per instance: starts them when instances appear (daemon start, API or CLI
 * create), stops and logs them out when instances are deleted, and turns their reports into
 * events on the bus.
 */
export class ConnectionManager {
  private readonly entries = new Map<string, ManagedConnection>();
  private readonly observers = new Map<string, Set<ConnectionObserver>>();

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

  private notify(id: string, event: ConnectionObservation): void {
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

  /** Brings the running connections in line with the store's instances. */
  sync(records: Iterable<InstanceRecord>): { started: string[]; removed: string[] } {
    const seen = new Set<string>();
    const started: string[] = [];
    for (const record of records) {
      seen.add(record.id);
      const existing = this.entries.get(record.id);
      if (existing) {
        // Records are replaced on reload; keep the connection, refresh what the router reads.
        (existing as { record: InstanceRecord }).record = record;
        continue;
      }
      this.add(record);
      started.push(record.id);
    }
    const removed: string[] = [];
    for (const id of [...this.entries.keys()]) {
      if (!seen.has(id)) {
        removed.push(id);
        void this.remove(id);
      }
    }
    return { started, removed };
  }

  private add(record: InstanceRecord): ManagedConnection {
    const { bus, logger } = this.options;
    const id = record.id;
    const log = logger.child({ instanceId: id });
    const hooks: ConnectionHooks = {
      onStatus: (change) => {
        log.info({ from: change.from, to: change.to, reason: change.reason }, 'connection status');
        if (this.options.reportStatus) {
          this.options.reportStatus(id, change);
        } else {
          const event = { type: 'instance.status' as const, instanceId: id, timestamp: new Date(this.options.now()).toISOString(), data: { from: change.from, to: change.to, reason: change.reason ?? null } };
          bus.publish(event).catch((err: unknown) => log.error({ err }, 'could not store instance.status event'));
        }
        this.notify(id, { type: 'status', change });
      },
      onQr: (qr) => {
        const event = { type: 'qr.updated' as const, instanceId: id, timestamp: new Date(this.options.now()).toISOString(), data: { qr } };
        bus.publish(event).catch((err: unknown) => log.error({ err }, 'could not store qr.updated event'));
        this.notify(id, { type: 'qr', qr });
      },
      onMessage: (message) =>
        bus.publish({ type: 'message.received', instanceId: id, timestamp: new Date(this.options.now()).toISOString(), data: message }),
    };
    const factory = record.sandbox ? this.options.sandboxFactory : this.options.baileysFactory;
    if (!factory) throw new Error('no connection factory for WhatsApp instances');
    const connection = factory(record, hooks);
    const pacing = record.sandbox ? { minIntervalMs: 0, jitterMs: 0, maxWaitMs: 0 } : this.options.pacing;
    const entry: ManagedConnection = {
      record,
      connection,
      queue: new SendQueue(pacing, this.options.now),
      rate: new RateWindow(this.options.sendsPerMinute, this.options.now),
    };
    this.entries.set(id, entry);
    try {
      connection.start();
    } catch (err) {
      log.error({ err }, 'connection failed to start');
    }
    return entry;
  }

  /** The instance was deleted: log the device out and remove its credentials. */
  async remove(id: string): Promise<void> {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    try {
      await entry.connection.logout();
    } catch (err) {
      this.options.logger.warn({ err, instanceId: id }, 'logout of a deleted instance failed');
    }
  }

  /** Shutdown: close every connection, keep credentials. */
  async stopAll(): Promise<void> {
    await Promise.allSettled([...this.entries.values()].map((e) => e.connection.stop()));
  }
}
