import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/schema.js';
import type { ConnectionManager } from '../connection/manager.js';
import type { Clock } from '../domain/clock.js';
import type { DaemonMode } from '../features/feature.js';
import type { StatusReporter } from '../status/status-reporter.js';
import type { CreditRepository } from '../storage/ports/credits.js';
import type { InstanceRepository } from '../storage/ports/instances.js';
import type { Storage } from '../storage/storage.js';

/** What creating and deleting instances needs. */
export interface LifecycleParts {
  mode: DaemonMode;
  config: Pick<GatewayConfig, 'plans'>;
  clock: Clock;
  logger: Logger;
  instances: InstanceRepository;
  credits: CreditRepository;
  storage: Pick<Storage, 'removeInstance'>;
  manager: Pick<ConnectionManager, 'remove'>;
  /** Runs a new instance's connection (on several hosts, this node takes its lease first). */
  startConnection(record: InstanceRecord): Promise<void>;
  status: Pick<StatusReporter, 'planChanged' | 'forget'>;
}
import { GatewayError } from '../domain/errors.js';
import type { InstanceRecord, WebhookSettings } from '../schemas/instance.js';
import type { LogoutOutcome } from '../connection/types.js';
import type { CreatedInstance, CreateInstanceInput } from '../storage/ports/instances.js';
import { generateApiKey, hashSecret } from '../domain/secrets.js';
import { MAX_PREMIUM_DAYS } from '../domain/limits.js';
import { extendedPremium } from '../plans/rules.js';
import { isInstanceId } from '../domain/ids.js';

export interface DeleteResult {
  instanceId: string;
  /** What became of the WhatsApp device: logged out, never paired, or WhatsApp could not be reached. */
  logout: LogoutOutcome | 'not-connected' | 'failed';
}

/**
 * Creating and deleting instances, and the plan and key changes around them: the one path for the
 * REST routes and (through them) the CLI.
 */
export class InstanceLifecycle {
  constructor(
    private readonly core: LifecycleParts,
    /** What each feature stores for an instance goes through these on delete. */
    private readonly removers: ReadonlyArray<(id: string) => Promise<void>>,
    private readonly logoutTimeoutMs: number,
  ) {}

  /** Creates an instance with its starting credits (stored first) and starts its connection. */
  async create(input: CreateInstanceInput, extraCredits = 0): Promise<CreatedInstance> {
    const { instances, credits: ledger, config, status, mode } = this.core;
    const credits = extraCredits + config.plans.initialCredits;
    const created = await instances.create(input, async (id) => {
      if (credits > 0) await ledger.add(id, credits);
    });
    if (mode === 'daemon') await this.core.startConnection(created.record);
    status.planChanged(created.record.id);
    return created;
  }

  async addCredits(id: string, amount: number): Promise<void> {
    this.core.instances.require(id);
    await this.core.credits.add(id, amount);
    this.core.status.planChanged(id);
  }

  async grantPremium(id: string, days: number): Promise<InstanceRecord> {
    if (!Number.isInteger(days) || days < 1 || days > MAX_PREMIUM_DAYS) {
      throw new GatewayError('INVALID_FIELD', `days: expected a whole number from 1 to ${MAX_PREMIUM_DAYS}`);
    }
    const now = this.core.clock.now();
    const record = await this.core.instances.modify(id, (r) => {
      r.premiumUntil = extendedPremium(r.premiumUntil, days, now);
    });
    this.core.status.planChanged(id);
    return record;
  }

  /**
   * A new API key. The old one keeps working only until `shown()` (the answer carrying the new key
   * was delivered, or the new key was used): a crash in between leaves both working, never none.
   */
  async rotateKey(id: string): Promise<{ apiKey: string; shown: () => Promise<void> }> {
    const apiKey = generateApiKey();
    const keyHash = hashSecret(apiKey);
    await this.core.instances.modify(id, (r) => {
      // The key kept is the last one known to have been shown: after an earlier rotation that was
      // never confirmed, that is still the one it replaced (its new key may never have arrived).
      r.retiringKeyHash = r.retiringKeyHash ?? r.keyHash;
      r.keyHash = keyHash;
    });
    return { apiKey, shown: () => this.keyShown(id, keyHash) };
  }

  /** The key with this hash reached its holder: the one it replaced stops working now. */
  async keyShown(id: string, keyHash: string): Promise<void> {
    const record = this.core.instances.get(id);
    if (record?.keyHash !== keyHash || record.retiringKeyHash === undefined) return;
    // Refused from this moment; stored behind (the answer may already be with its holder).
    const old = record.retiringKeyHash;
    this.retired.set(id, old);
    try {
      await this.core.instances.modify(id, (r) => {
        if (r.keyHash === keyHash) delete r.retiringKeyHash;
      });
    } finally {
      if (this.retired.get(id) === old) this.retired.delete(id);
    }
  }

  /** Rotated-out keys whose retirement is being stored: refused already. */
  private readonly retired = new Map<string, string>();

  /** Whether the instance's retiring key was retired a moment ago (its record not yet rewritten). */
  isRetired(id: string, keyHash: string): boolean {
    return this.retired.get(id) === keyHash;
  }

  async setWebhook(id: string, webhook: WebhookSettings | null): Promise<InstanceRecord> {
    return this.core.instances.modify(id, (r) => {
      r.webhook = webhook;
    });
  }

  /**
   * Deletes an instance: first out of service (every route refuses it from then on), then its
   * device logged out, its sends in flight settled, and every file it has removed; the record goes
   * last. If anything fails the instance stays marked and a new delete (or the next start) finishes
   * the job. An unknown id with files left behind (an older interrupted delete) is cleaned too.
   */
  async delete(id: string): Promise<DeleteResult> {
    const { instances, manager, credits: ledger, status, logger } = this.core;
    let record = instances.getAny(id);
    if (!record) {
      if (isInstanceId(id) && (await this.removeFiles(id))) return { instanceId: id, logout: 'not-connected' };
      throw new GatewayError('NOT_FOUND', `no instance with id ${JSON.stringify(id.slice(0, 60))}`);
    }
    if (!record.deleting) record = await instances.markDeleting(id);
    status.forget(id);
    const logout = await manager.remove(id, record, this.logoutTimeoutMs);
    await ledger.forget(id);
    await this.removeFiles(id);
    await instances.remove(id);
    logger.info({ instanceId: id, logout }, 'instance deleted');
    return { instanceId: id, logout };
  }

  /** Finishes deletions a crash or a full disk interrupted. */
  async resumeDeletes(): Promise<void> {
    for (const r of this.core.instances.deleting()) {
      await this.delete(r.id).catch((err: unknown) => this.core.logger.error({ err, instanceId: r.id }, 'could not finish deleting an instance'));
    }
  }

  /** Removes everything stored for `id` (each feature's, then the storage's); true when there was something. */
  private async removeFiles(id: string): Promise<boolean> {
    for (const removeFeatureData of this.removers) await removeFeatureData(id);
    return this.core.storage.removeInstance(id);
  }
}
