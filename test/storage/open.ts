/** Opening a storage engine at an address: shared by the tests (engines.ts) and crash children. */
import { pino } from 'pino';
import type { GatewayConfig } from '../../src/config/schema.js';
import { defaultConfig } from '../../src/config/validate.js';
import { systemClock, type Clock } from '../../src/domain/clock.js';
import { systemTimers, type Timers } from '../../src/domain/timers.js';
import { openFileStorage } from '../../src/storage/files/index.js';
import { openPostgresStorage } from '../../src/storage/postgres/index.js';
import type { Storage, StorageEngine } from '../../src/storage/storage.js';
import { UNGUARDED } from '../../src/fs/write-guard.js';

export type ConfigPatch = { [K in keyof GatewayConfig]?: GatewayConfig[K] extends object ? Partial<GatewayConfig[K]> : GatewayConfig[K] };

export interface OpenOptions {
  config?: ConfigPatch;
  clock?: Clock;
  timers?: Timers;
}

/** Defaults with `patch` applied one level deep per section. */
export function testConfig(patch: ConfigPatch = {}): GatewayConfig {
  const config = defaultConfig() as unknown as Record<string, unknown>;
  for (const [k, v] of Object.entries(patch)) {
    const base = config[k];
    config[k] = typeof v === 'object' && v !== null && !Array.isArray(v) && typeof base === 'object' && base !== null ? { ...base, ...v } : v;
  }
  return config as unknown as GatewayConfig;
}

const silent = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

/** Opens the engine at `address` (also used by crash children). */
export async function openAt(engine: StorageEngine, address: string, options: OpenOptions = {}): Promise<Storage> {
  const config = testConfig(options.config);
  const clock = options.clock ?? systemClock;
  const timers = options.timers ?? systemTimers;
  switch (engine) {
    case 'files':
      return openFileStorage({ guard: UNGUARDED, dataDir: address, config, clock, timers, logger: silent });
    case 'postgres':
      // Small pools: many tests (and their crash children) share one server's connections.
      return openPostgresStorage({ url: address, config, clock, timers, logger: silent, poolSize: 4, lazyPoolSize: 2 });
  }
}

