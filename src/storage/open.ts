import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/schema.js';
import type { Clock } from '../domain/clock.js';
import type { Timers } from '../domain/timers.js';
import type { WriteGuard } from '../fs/write-guard.js';
import { openFileStorage } from './files/index.js';
import type { Storage } from './storage.js';

export interface OpenStorageOptions {
  dataDir: string;
  config: GatewayConfig;
  clock: Clock;
  timers: Timers;
  logger: Logger;
  guard: WriteGuard;
}

/**
 * The engine the config names: PostgreSQL when `storage.postgres.url` is set (this daemon is then a
 * node of the gateway that database holds), else the files in the data dir.
 */
export async function openStorage(options: OpenStorageOptions): Promise<{ storage: Storage; config: GatewayConfig }> {
  const url = options.config.storage.postgres.url;
  if (url === null) return { storage: await openFileStorage(options), config: options.config };
  // Loaded only here: pg (and what it loads at import, undici for its runtime check) is ~65 ms of
  // every CLI command's start-up on the files engine otherwise (see scripts/bundle.mjs).
  const { openPostgresStorage } = await import('./postgres/index.js');
  const storage = await openPostgresStorage({ url, config: options.config, clock: options.clock, timers: options.timers, logger: options.logger, nodeId: nodeIdOf(options.config) });
  // One gateway, not one per node: the plans and the webhook policy are the gateway's.
  const shared = await storage.db.query<{ settings: Partial<Pick<GatewayConfig, 'plans' | 'webhooks'>> }>('the gateway record', 'SELECT settings FROM gateway WHERE id = 1');
  const settings = shared.rows[0]?.settings ?? {};
  const config: GatewayConfig = {
    ...options.config,
    plans: { ...options.config.plans, ...(settings.plans ?? {}) },
    webhooks: { ...options.config.webhooks, ...(settings.webhooks ?? {}) },
  };
  storage.instances.setTrialDays?.(config.plans.trialDays);
  return { storage, config };
}

/** This node's id: `cluster.nodeId`, else hostname:port (a port of 0 needs an explicit id). */
export function nodeIdOf(config: Pick<GatewayConfig, 'cluster' | 'port'>): string {
  if (config.cluster.nodeId !== null) return config.cluster.nodeId;
  if (config.port === 0) throw new Error('cluster.nodeId: set it when the port is 0 (chosen at start), so the node keeps one id');
  return `${hostname().replace(/[^A-Za-z0-9._-]/g, '-') || 'gateway'}:${config.port}`;
}
