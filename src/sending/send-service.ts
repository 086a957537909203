import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { ConnectionManager, ManagedConnection } from '../connection/manager.js';
import type { ConnectionActions, Outgoing, OutgoingDraft } from '../connection/types.js';
import { newMessageId } from '../domain/ids.js';
import type { MessageHub } from '../messages/hub.js';
import type { Clock } from '../domain/clock.js';
import { GatewayError, errorMessage } from '../domain/errors.js';
import type { MetricsSink } from '../domain/metrics-sink.js';
import type { CreditHold, CreditRepository } from '../storage/ports/credits.js';
import { isPremium, requiresPremium } from '../plans/rules.js';
import type { InstanceRepository } from '../storage/ports/instances.js';

export interface SendResult {
  messageId: string;
  quotaRemaining: string;
}

export interface SendDeps {
  instances: InstanceRepository;
  credits: CreditRepository;
  manager: ConnectionManager;
  clock: Clock;
  logger: Logger;
  metrics: MetricsSink;
  /** Show typing presence before each message (config sending.typing). */
  typing?: boolean;
  /** The plan of `id` changed (its last credit was spent). */
  planChanged?: (id: string) => void;
  /** Where every outgoing message is stored and its status published. */
  hub: MessageHub;
  /** Counts each message sent per day (GET /api/instances/{id}/usage). */
  usage?: { count(instanceId: string, at: number, debited: boolean): void };
}

const PREMIUM_LAPSED = 'premium has expired and no credits remain: the operator renews it with `gateway premium grant ID --days N` or adds credits with `gateway credits add ID N`';

/**
 * Sends one message under the plan rules, in DESIGN.md's order after input checks: plan (403;
 * a credit's hold is stored here, 503 STORAGE_UNAVAILABLE if it cannot be), connection (503), rate
 * limits (429). The held credit is debited durably after the send succeeded and before the caller
 * answers 200, and released if the send failed. Every send kind goes through here, paced by the
 * instance's anti-ban queue.
 */
export class SendService implements ConnectionActions {
  constructor(private readonly deps: SendDeps) {}

  async send(instanceId: string, draft: OutgoingDraft): Promise<SendResult> {
    // A poll's secret is chosen with its id, so it is stored with the pending poll before it leaves:
    // the votes that come back are encrypted with it.
    const message = { ...draft, id: newMessageId(), ...(draft.kind === 'poll' && draft.secret === undefined ? { secret: randomBytes(32).toString('base64') } : {}) } as Outgoing;
    try {
      const result = await this.sendUnobserved(instanceId, message);
      this.deps.usage?.count(instanceId, this.deps.clock.now(), result.quotaRemaining !== 'unlimited');
      this.deps.metrics.send('sent');
      if (result.quotaRemaining !== 'unlimited') this.deps.metrics.creditsSpent(1);
      return result;
    } catch (err) {
      const code = err instanceof GatewayError ? err.code : 'INTERNAL';
      this.deps.metrics.send(err instanceof GatewayError && err.status < 500 ? 'refused' : 'failed', code);
      throw err;
    }
  }

  /**
   * A free action on the instance's connection (reaction, edit, delete, read mark, presence, a
   * lookup): no plan check, 503 unless connected; `paced` ones wait their turn in the anti-ban queue.
   */
  async act<T>(instanceId: string, run: (connection: ManagedConnection['connection']) => Promise<T>, options: { paced: boolean }): Promise<T> {
    const entry = this.deps.manager.get(instanceId);
    const status = entry?.connection.status ?? 'disconnected';
    if (!entry || status !== 'connected') throw new GatewayError('CONNECTION_NOT_READY', `instance is ${status}, not connected`);
    return options.paced ? entry.queue.run(() => run(entry.connection)) : run(entry.connection);
  }

  /** Plan checks without sending: 403 when the instance could not send now (free actions skip this). */
  private async reserve(instanceId: string): Promise<CreditHold | null> {
    const { instances, credits: ledger, clock } = this.deps;
    const record = instances.get(instanceId);
    if (!record) throw new GatewayError('UNAUTHORIZED', 'unknown instance');
    const now = clock.now();
    if (isPremium(record, now)) return null;
    if (requiresPremium(record, ledger.available(instanceId), now)) throw new GatewayError('PREMIUM_REQUIRED', PREMIUM_LAPSED);
    const hold = await ledger.hold(instanceId);
    if (hold) return hold;
    if (record.premiumUntil !== null) throw new GatewayError('PREMIUM_REQUIRED', PREMIUM_LAPSED);
    throw new GatewayError('QUOTA_EXHAUSTED', `no credits left: the operator adds them with \`gateway credits add ${instanceId} N\` (or POST /api/instances/${instanceId}/credits) or grants premium`);
  }

  private async sendUnobserved(instanceId: string, message: Outgoing): Promise<SendResult> {
    let hold = await this.reserve(instanceId);
    try {
      const entry = this.deps.manager.get(instanceId);
      const status = entry?.connection.status ?? 'disconnected';
      if (!entry || status !== 'connected') throw new GatewayError('CONNECTION_NOT_READY', `instance is ${status}, not connected`);
      entry.rate.take();
      const { hub } = this.deps;
      // After a credit hold was stored, the record may wait for its status (see MessageRepository).
      await hub.pending(instanceId, message, message.id, { mayWait: hold !== null }).catch((err: unknown) => {
        if (err instanceof GatewayError && err.code === 'STORAGE_UNAVAILABLE') {
          throw new GatewayError('STORAGE_UNAVAILABLE', 'the message could not be recorded (disk full?); nothing was sent', { cause: err });
        }
        throw err;
      });
      try {
        await entry.queue.run(async () => {
          if (this.deps.typing && entry.connection.sendPresence && message.kind !== 'status') {
            // A short "typing..." before the message, as a person would; failures do not block it.
            await entry.connection.sendPresence(message.to, 'composing').catch(() => undefined);
          }
          return entry.connection.send(message);
        });
      } catch (err) {
        await hub.settled(instanceId, message.id, 'failed', err instanceof GatewayError ? err.message : 'the send failed').catch(() => undefined);
        throw err;
      }
      const messageId = message.id;
      const settled = hold;
      hold = null;
      // The debit is on disk before the 200, and so is the `sent` status when the disk takes it: a
      // status that cannot be stored (a full disk) must not turn a message that left into an
      // error the client would retry; it stays `pending` until a receipt moves it on.
      const [balanceAfter] = await Promise.all([
        settled?.commit().catch((err: unknown) => {
          // The message left: answering STORAGE_UNAVAILABLE ("nothing was sent") would make the
          // client send it again. Its debit stays queued and is written once the disk takes it.
          throw new GatewayError('SENT_NOT_RECORDED', `the message was sent (messageId ${messageId}) but its debit could not be stored yet (${errorMessage(err)}); do not send it again`, { cause: err, detail: { messageId } });
        }),
        // With nothing to debit, the 200 waits for the `sent` status on disk instead: written in
        // groups, as debits are, the answers of a burst leave together. Answered one by one as
        // each send returned, premium sends were slower than debited ones (10,413 against 12,754
        // a second, `BENCH_ONLY=sends npm run bench`): 30 % of the daemon's samples were the
        // `writev` of each answer waking the client, 5 % when answers leave in groups.
        hub.settled(instanceId, messageId, 'sent', undefined, { durable: settled === null }).catch((err: unknown) => this.deps.logger.warn({ instanceId, messageId, err }, 'the sent status of a message could not be stored')),
      ]);
      if (balanceAfter === undefined) return { messageId, quotaRemaining: 'unlimited' };
      if (balanceAfter === 0) this.deps.planChanged?.(instanceId);
      return { messageId, quotaRemaining: String(balanceAfter) };
    } finally {
      hold?.release();
    }
  }
}
