import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/schema.js';
import type { Clock } from '../domain/clock.js';
import type { Timers } from '../domain/timers.js';
import type { EventBus } from '../events/bus.js';
import type { SendService } from '../sending/send-service.js';
import type { FlowRepository } from '../storage/ports/flows.js';
import type { InstanceRepository } from '../storage/ports/instances.js';
import type { DaemonMode } from '../features/feature.js';
import type { AuditPart } from '../audit/audit-part.js';

/** What the chatbot is built from. */
export interface FlowsParts {
  mode: DaemonMode;
  config: Pick<GatewayConfig, 'flows'>;
  clock: Clock;
  timers: Timers;
  logger: Logger;
  bus: EventBus;
  sender: SendService;
  instances: Pick<InstanceRepository, 'get'>;
  store: FlowRepository;
  /** Flow changes, handover claims and releases go into the audit log. */
  audit?: AuditPart;
}
import type { Feature } from '../features/feature.js';
import { ConversationBook } from './conversations.js';
import { FlowDefinitions } from './definitions.js';
import { HandoverBook } from './handovers.js';
import { flowRoutes } from './routes.js';
import { FlowRunner } from './runner.js';

export interface FlowsFeature extends Feature {
  readonly runner: FlowRunner;
  readonly handovers: HandoverBook;
  /** The chats of an instance that a person took over (for the chats list). */
  openHandovers(instanceId: string): Promise<ReadonlySet<string>>;
  /** Resolves once queued inbound messages were handled and positions written (tests). */
  idle(): Promise<void>;
}

/** Chatbot flows with human handover: consumes `message.received`, publishes `conversation.handover`. */
export function flowsFeature(core: FlowsParts): FlowsFeature {
  const log = core.logger.child({ component: 'flows' });
  const files = core.store;
  const definitions = new FlowDefinitions(files, core.clock, log);
  const handovers = new HandoverBook(files, core.clock, core.timers, log);
  const conversations = new ConversationBook(files, log, 10_000);
  const runner = new FlowRunner({
    definitions,
    handovers,
    conversations,
    sender: core.sender,
    bus: core.bus,
    clock: core.clock,
    logger: log,
    handoverTimeoutMinutes: core.config.flows.handoverTimeoutMinutes,
    maxPendingPerChat: 100,
    exists: (id) => core.instances.get(id) !== undefined,
  });
  return {
    name: 'flows',
    runner,
    handovers,
    openHandovers: async (id) => new Set((await handovers.list(id)).map((h) => h.chatId)),
    routes: flowRoutes(definitions, handovers, { ...(core.audit ? { audit: core.audit } : {}), clock: core.clock, handoverTimeoutMinutes: core.config.flows.handoverTimeoutMinutes }),
    consumers: core.mode === 'daemon' ? [{ consumer: runner }] : [],
    async start() {
      if (core.mode !== 'daemon') return;
      // Handovers of every instance that has some stored, so their expiries are watched.
      const ids = await files.instancesWithHandovers();
      await handovers.preload(ids.filter((n) => core.instances.get(n) !== undefined));
    },
    async removeInstance(id) {
      definitions.forget(id);
      handovers.forget(id);
      conversations.forget(id);
      await files.removeInstance(id);
    },
    async idle() {
      await runner.idle();
      await conversations.flush();
    },
    async stop() {
      handovers.stop();
      await runner.stop();
      await conversations.flush();
    },
  };
}
