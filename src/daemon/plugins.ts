import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/schema.js';
import type { ConnectionFactory } from '../connection/types.js';
import type { Clock } from '../domain/clock.js';
import type { DaemonPlugin } from './boot.js';

/** The parts the production daemon runs with, in start order. */
export function daemonPlugins(): DaemonPlugin[] {
  return [];
}

/** Real WhatsApp connections for non-sandbox instances. */
export function baileysFactory(_deps: { config: GatewayConfig; logger: Logger; dataDir: string; clock: Clock }): ConnectionFactory {
  return () => {
    throw new Error('WhatsApp (Baileys) connections are not wired yet');
  };
}
