import type { Logger } from 'pino';
import type { ConnectionManager } from '../connection/manager.js';
import type { StatusChange } from '../connection/types.js';
import type { Clock } from '../domain/clock.js';
import { MAX_TIMER_MS, type TimerHandle, type Timers } from '../domain/timers.js';
import type { ConnectionStatus, InstanceStatus } from '../domain/types.js';
import type { InstanceRecord } from '../schemas/instance.js';
import type { EventBus } from '../events/bus.js';
import type { InstanceRepository } from '../storage/ports/instances.js';
import type { CreditRepository } from '../storage/ports/credits.js';
import { effectiveStatus, isPremium, quotaRemaining } from '../plans/rules.js';

export interface StatusReporterDeps {
  instances: InstanceRepository;
  credits: CreditRepository;
  manager: ConnectionManager;
  bus: EventBus;
  clock: Clock;
  timers: Timers;
  logger: Logger;
  /** No daemon runs (a CLI command): connections are not open, status shows `disconnected`. */
  offline: boolean;
  /** Several hosts: the status of an instance whose connection runs on another node (its lease). */
  elsewhere?: (instanceId: string) => { status: ConnectionStatus | null; reason: string | null } | null;
}

/** How the API shows an instance's status and plan. */
export interface StatusView {
  instanceId: string;
  status: InstanceStatus;
  reason: string | null;
  premium: boolean;
  premiumUntil: string | null;
  credits: number;
  quotaRemaining: string;
}

const PREMIUM_LAPSED = 'premium expired and no credits remain';

/**
 * The status the API shows (the connection's, or `requires_premium` while premium lapsed and no
 * credits remain), and `instance.status` when it changes: once per change, logged once. A
 * connection retrying in the background does not change it (it stays `disconnected`); its
 * give-up is one more `disconnected` -> `disconnected` event with the reason. Plan changes
 * are noticed when they happen (`planChanged`) and at the next premium expiry (one timer).
 */
export class StatusReporter {
  private readonly last = new Map<string, InstanceStatus>();
  private timer: TimerHandle | null = null;
  private running = false;

  constructor(private readonly deps: StatusReporterDeps) {}

  start(): void {
    this.running = true;
    for (const record of this.deps.instances.list()) this.last.set(record.id, this.current(record));
    this.arm();
  }

  stop(): void {
    this.running = false;
    this.timer?.cancel();
    this.timer = null;
  }

  /** The status and plan of one instance as the API shows them. */
  view(record: InstanceRecord): StatusView {
    const now = this.deps.clock.now();
    const credits = this.deps.credits.balance(record.id);
    const connection = this.deps.manager.get(record.id)?.connection;
    const offline = this.deps.offline && !connection;
    const remote = connection ? null : (this.deps.elsewhere?.(record.id) ?? null);
    const status = effectiveStatus(record, credits, now, connection?.status ?? remote?.status ?? (offline ? 'disconnected' : 'initializing'));
    return {
      instanceId: record.id,
      status,
      reason: status === 'requires_premium' ? PREMIUM_LAPSED : (connection?.reason ?? remote?.reason ?? (offline ? 'the daemon is not running' : null)),
      premium: isPremium(record, now),
      premiumUntil: record.premiumUntil,
      credits,
      quotaRemaining: quotaRemaining(record, credits, now),
    };
  }

  private current(record: InstanceRecord): InstanceStatus {
    return this.view(record).status;
  }

  /**
   * A connection reported a change of its own status. Its give-up is reported even when the
   * status stays `disconnected` (after retries): the last instance.status says it stopped trying.
   */
  connectionChanged(id: string, change: StatusChange): void {
    void this.evaluate(id, change.reason ?? null, change.next === 'gave-up');
  }

  /** Premium or credits of `id` changed (granted, added, spent to zero): re-evaluate now. */
  planChanged(id: string): void {
    void this.evaluate(id, null);
    this.arm();
  }

  /** The instance is gone. */
  forget(id: string): void {
    this.last.delete(id);
  }

  /** One timer for the earliest premium expiry still ahead. */
  private arm(): void {
    if (!this.running) return;
    this.timer?.cancel();
    this.timer = null;
    const now = this.deps.clock.now();
    let next = Number.POSITIVE_INFINITY;
    for (const r of this.deps.instances.list()) {
      const until = r.premiumUntil === null ? NaN : Date.parse(r.premiumUntil);
      if (until > now) next = Math.min(next, until);
    }
    if (!Number.isFinite(next)) return;
    // A later expiry than the longest timer re-arms when this one fires.
    this.timer = this.deps.timers.after(Math.min(MAX_TIMER_MS, next - now + 5), () => this.expired());
  }

  private expired(): void {
    this.timer = null;
    const now = this.deps.clock.now();
    for (const r of this.deps.instances.list()) {
      if (r.premiumUntil !== null && !isPremium(r, now)) void this.evaluate(r.id, null);
    }
    this.arm();
  }

  private async evaluate(id: string, connectionReason: string | null, gaveUp = false): Promise<void> {
    try {
      const { instances, clock, bus, logger } = this.deps;
      const record = instances.get(id);
      if (!record) return;
      const view = this.view(record);
      const to = view.status;
      const from = this.last.get(id);
      this.last.set(id, to);
      if (from === undefined || (from === to && !(gaveUp && to === 'disconnected'))) return;
      const now = clock.now();
      const reason =
        to === 'requires_premium'
          ? PREMIUM_LAPSED
          : from === 'requires_premium'
            ? (connectionReason ?? (isPremium(record, now) ? 'premium granted' : 'credits added'))
            : (connectionReason ?? view.reason);
      logger.info({ instanceId: id, from, to, reason }, 'instance status');
      await bus.publish({ type: 'instance.status', instanceId: id, timestamp: new Date(now).toISOString(), data: { from, to, reason } });
    } catch (err) {
      this.deps.logger.error({ err, instanceId: id }, 'could not report an instance status change');
    }
  }
}
