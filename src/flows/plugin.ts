import type { DaemonPlugin } from '../daemon/boot.js';
import { flowRoutes } from './routes.js';
import { FlowService, type FlowServiceOptions } from './service.js';

export interface FlowsPlugin extends DaemonPlugin {
  /** The running service once `setup` ran (tests wait on `service.idle()`). */
  readonly service: FlowService | null;
}

/**
 * Chatbot flows with human handover: consumes `message.received`, publishes
 * `conversation.handover`, serves /api/{id}/flow, /handovers and /handover/release.
 */
export function createFlowsPlugin(options: FlowServiceOptions = {}): FlowsPlugin {
  let service: FlowService | null = null;
  return {
    name: 'flows',
    get service() {
      return service;
    },
    async setup(deps, { appOptions }) {
      const created = new FlowService(
        {
          dataDir: deps.instances.paths.dataDir,
          instances: deps.instances,
          sender: deps.sender,
          bus: deps.bus,
          clock: deps.clock,
          logger: deps.logger,
          handoverTimeoutMinutes: deps.config.flows.handoverTimeoutMinutes,
        },
        options,
      );
      await created.start();
      deps.bus.register(created);
      (appOptions.extensions ??= []).push(flowRoutes(created));
      service = created;
    },
    async stop() {
      await service?.stop();
    },
  };
}
