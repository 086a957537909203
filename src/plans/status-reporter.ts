import type { Logger } from 'pino';
import type { ConnectionManager } from '../connection/manager.js';
import type { StatusChange } from '../connection/types.js';
import type { Clock } from '../domain/clock.js';
import type { InstanceStatus } from '../domain/types.js';
import type { EventBus } from '../events/bus.js';
import type { InstanceStore } from '../store/instances.js';
import type { CreditLedger } from './credit-ledger.js';
import { effectiveStatus, isPremium } from './rules.js';

export interface StatusReporterDeps {
  instances: InstanceStore;
  ledger: CreditLedger;
  manager: ConnectionManager;
  bus: EventBus;
  clock: Clock;
  logger: Logger;
}

/**
 * Publishes `instance.status` with the status the API shows: the connection's, or
 * `requires_premium` while premium has lapsed and no credits remain. Connection changes arrive
 * through `connectionChanged`; plan changes (premium running out, credits or premium granted) are
 * noticed by a check every `intervalMs`, which only looks at instances whose premium has lapsed.
 */
export class StatusReporter {
  private readonly last = new Map<string, InstanceStatus>();
  private timer: NodeJS.Timeout | null = null;
  private checking = false;

  constructor(private readonly deps: StatusReporterDeps) {}

  start(intervalMs = 1000): void {
    this.timer = setInterval(() => void this.checkPlans(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  connectionChanged(id: string, change: StatusChange): void {
    if (!this.last.has(id)) this.last.set(id, change.from);
    void this.evaluate(id, change.reason ?? null);
  }

  /** Re-evaluates instances whose plan may have changed status. */
  async checkPlans(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      const now = this.deps.clock.now();
      for (const entry of this.deps.manager.all()) {
        const record = entry.record;
        const lapsed = record.premiumUntil !== null && !isPremium(record, now);
        if (lapsed || this.last.get(record.id) === 'requires_premium') await this.evaluate(record.id, null);
      }
      // Deleted instances leave nothing behind.
      for (const id of this.last.keys()) if (!this.deps.manager.get(id)) this.last.delete(id);
    } finally {
      this.checking = false;
    }
  }

  private async evaluate(id: string, connectionReason: string | null): Promise<void> {
    try {
      const { instances, ledger, manager, clock, bus } = this.deps;
      const record = instances.get(id);
      const connection = manager.get(id)?.connection;
      if (!record || !connection) return;
      const now = clock.now();
      const balance = record.premiumUntil !== null && !isPremium(record, now) ? await ledger.balance(id) : 1;
      const to = effectiveStatus(record, balance, now, connection.status);
      const from = this.last.get(id) ?? connection.status;
      if (from === to) return;
      this.last.set(id, to);
      const reason =
        to === 'requires_premium'
          ? 'premium expired and no credits remain'
          : from === 'requires_premium'
            ? (connectionReason ?? (isPremium(record, now) ? 'premium granted' : 'credits added'))
            : connectionReason;
      await bus.publish({ type: 'instance.status', instanceId: id, timestamp: new Date(now).toISOString(), data: { from, to, reason } });
    } catch (err) {
      this.deps.logger.error({ err, instanceId: id }, 'could not report an instance status change');
    }
  }
}
