import { readFileSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { GatewayError, errorMessage } from '../domain/errors.js';
import { writeFileAtomic, type WriteGuard } from '../fs/atomic-write.js';
import { validateConfig } from './validate.js';
import type { GatewayConfig } from './schema.js';

export const CONFIG_FILE = 'config.json';

/** The data dir from `--data-dir`, else GATEWAY_DATA_DIR, else ./data. Only src/config reads env. */
export function resolveDataDir(flag: string | undefined): string {
  return resolve(flag ?? process.env.GATEWAY_DATA_DIR ?? 'data');
}

/** LOG_LEVEL from the environment, if set. */
export function envLogLevel(): string | undefined {
  return process.env.LOG_LEVEL || undefined;
}

export function configPath(dataDir: string): string {
  return join(dataDir, CONFIG_FILE);
}

export function isInitialised(dataDir: string): boolean {
  return existsSync(configPath(dataDir));
}

/** Reads and validates DATA_DIR/config.json; a missing, unreadable or invalid file is CONFIG_INVALID. */
export function loadConfig(dataDir: string): GatewayConfig {
  const file = configPath(dataDir);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new GatewayError('CONFIG_INVALID', `${file} not found: run "gateway init" (or "gateway start", which initialises with defaults)`);
    }
    throw new GatewayError('CONFIG_INVALID', `${file}: cannot read: ${errorMessage(err)}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new GatewayError('CONFIG_INVALID', `${file}: not valid JSON (${errorMessage(err)}); fix or restore it, the file was left untouched`);
  }
  return validateConfig(raw, file);
}

/** Writes config.json whole; `guard` is the data dir lock of the writer (see fs/write-guard.ts). */
export async function saveConfig(dataDir: string, config: GatewayConfig, guard: WriteGuard): Promise<void> {
  await writeFileAtomic(configPath(dataDir), `${JSON.stringify(config, null, 2)}\n`, { guard });
}

/**
 * The config with what the environment sets over it: GATEWAY_DATABASE_URL (storage.postgres.url)
 * and GATEWAY_CLUSTER_SECRET (cluster.secret). Never written back to config.json.
 */
export function withEnvironment(config: GatewayConfig): GatewayConfig {
  const url = process.env.GATEWAY_DATABASE_URL;
  const secret = process.env.GATEWAY_CLUSTER_SECRET;
  return {
    ...config,
    storage: { ...config.storage, postgres: { ...config.storage.postgres, url: url || config.storage.postgres.url } },
    cluster: { ...config.cluster, secret: secret || config.cluster.secret },
  };
}

/** GATEWAY_DATABASE_URL, if set (`gateway init` without --database). */
export function envDatabaseUrl(): string | undefined {
  return process.env.GATEWAY_DATABASE_URL || undefined;
}

/** GATEWAY_CLUSTER_SECRET, if set. */
export function envClusterSecret(): string | undefined {
  return process.env.GATEWAY_CLUSTER_SECRET || undefined;
}
