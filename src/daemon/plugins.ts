import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/schema.js';
import type { ConnectionFactory } from '../connection/types.js';
import type { Clock } from '../domain/clock.js';
import type { DaemonPlugin } from './boot.js';
import { createBaileysConnectionFactory } from '../connection/baileys/connection.js';
import { createMetricsPlugin } from '../metrics/plugin.js';
import { createDocsPlugin } from '../ops/openapi-plugin.js';
import { createWebhookPlugin } from '../webhooks/plugin.js';
import { createFlowsPlugin } from '../flows/plugin.js';
import { createControlPlugin } from './control/plugin.js';

/** The parts the production daemon runs with, in start order. */
export function daemonPlugins(): DaemonPlugin[] {
  return [
    // Metrics first: it installs the sink the other parts report to.
    createMetricsPlugin(),
    createDocsPlugin(),
    createWebhookPlugin(),
    createFlowsPlugin(),
    createControlPlugin(),
  ];
}

/** Real WhatsApp connections for non-sandbox instances. */
export function baileysFactory(deps: { config: GatewayConfig; logger: Logger; dataDir: string; clock: Clock }): ConnectionFactory {
  return createBaileysConnectionFactory({ dataDir: deps.dataDir, logger: deps.logger, settings: deps.config.baileys, clock: deps.clock });
}
