import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/schema.js';
import type { ConnectionManager } from '../connection/manager.js';
import type { Clock } from '../domain/clock.js';
import type { EventBus } from '../events/bus.js';
import type { CreditLedger } from '../plans/credit-ledger.js';
import type { CreditStore } from '../store/credits.js';
import type { InstanceStore } from '../store/instances.js';
import type { Gauges, MetricsSink } from '../domain/metrics.js';
import type { SendService } from '../sending/send-service.js';

/** Checks a webhook URL may be used (SSRF policy); throws a GatewayError/UserError if not. */
export type WebhookTargetCheck = (url: string) => Promise<void>;

/** Everything the HTTP app is built from; no part of it reaches for a singleton. */
export interface AppDeps {
  config: GatewayConfig;
  instances: InstanceStore;
  credits: CreditStore;
  ledger: CreditLedger;
  manager: ConnectionManager;
  bus: EventBus;
  clock: Clock;
  logger: Logger;
  checkWebhookTarget: WebhookTargetCheck;
  /** Sends under the plan rules; API routes and chatbot flows both use it. */
  sender: SendService;
  /** Replaced by the metrics plugin; no-op by default. */
  metrics: MetricsSink;
  /** Filled in by the parts that own the figures. */
  gauges: Gauges;
  /** Re-reads the store if another process changed it, and syncs connections to it. */
  reload(): Promise<void>;
}
