import type { Logger } from 'pino';
import type { ConnectionManager } from '../connection/manager.js';
import type { Outgoing } from '../connection/types.js';
import type { Clock } from '../domain/clock.js';
import { GatewayError } from '../domain/errors.js';
import type { CreditLedger, CreditHold } from '../plans/credit-ledger.js';
import { isPremium, requiresPremium } from '../plans/rules.js';
import type { InstanceStore } from '../store/instances.js';
import type { MetricsSink } from '../domain/metrics.js';

export interface SendResult {
  messageId: string;
  quotaRemaining: string;
}

export interface SendDeps {
  instances: InstanceStore;
  ledger: CreditLedger;
  manager: ConnectionManager;
  clock: Clock;
  logger: Logger;
  /** Show typing presence before each message (config sending.typing). */
  typing?: boolean;
  /** Read at each send, so a metrics plugin can replace it after start. */
  metrics: MetricsSink;
}

/**
 * Sends one message under the plan rules, in DESIGN.md's order after input checks: plan (403),
 * connection (503), rate limits (429). A credit is reserved before sending, debited durably after
 * the send succeeded and before the caller answers 200, and released if the send failed.
 */
export class SendService {
  constructor(private readonly deps: SendDeps) {}

  async send(instanceId: string, message: Outgoing): Promise<SendResult> {
    try {
      const result = await this.sendUnobserved(instanceId, message);
      this.deps.metrics.send('sent');
      if (result.quotaRemaining !== 'unlimited') this.deps.metrics.creditsSpent(1);
      return result;
    } catch (err) {
      const code = err instanceof GatewayError ? err.code : 'INTERNAL';
      this.deps.metrics.send(err instanceof GatewayError && err.status < 500 ? 'refused' : 'failed', code);
      throw err;
    }
  }

  private async sendUnobserved(instanceId: string, message: Outgoing): Promise<SendResult> {
    const { instances, ledger, manager, clock } = this.deps;
    const record = instances.get(instanceId);
    const entry = manager.get(instanceId);
    if (!record || !entry) throw new GatewayError('UNAUTHORIZED', 'unknown instance');
    const now = clock.now();

    let hold: CreditHold | null = null;
    if (!isPremium(record, now)) {
      const balance = await ledger.balance(instanceId);
      if (requiresPremium(record, balance, now)) {
        throw new GatewayError('PREMIUM_REQUIRED', 'premium has expired and no credits remain; renew premium or add credits');
      }
      hold = await ledger.hold(instanceId);
      if (!hold) {
        if (record.premiumUntil !== null) throw new GatewayError('PREMIUM_REQUIRED', 'premium has expired and no credits remain; renew premium or add credits');
        throw new GatewayError('QUOTA_EXHAUSTED', 'no credits left; add credits or grant premium');
      }
    }

    try {
      const status = entry.connection.status;
      if (status !== 'connected') {
        throw new GatewayError('CONNECTION_NOT_READY', `instance is ${status}, not connected`);
      }
      entry.rate.take();
      const { messageId } = await entry.queue.run(async () => {
        if (this.deps.typing && entry.connection.sendPresence) {
          // A short "typing..." before the message, as a person would; failures do not block it.
          await entry.connection.sendPresence(message.phone, 'composing').catch(() => undefined);
        }
        return entry.connection.send(message);
      });
      if (!hold) return { messageId, quotaRemaining: 'unlimited' };
      const settled = hold;
      hold = null;
      const balanceAfter = await settled.commit();
      return { messageId, quotaRemaining: String(balanceAfter) };
    } finally {
      hold?.release();
    }
  }
}
