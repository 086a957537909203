import { GatewayError } from '../domain/errors.js';
import { isRecord } from '../domain/guards.js';
import { issueText, issues, withDefaults } from '../schemas/check.js';
import { ConfigSchema, type GatewayConfig } from './schema.js';

/** Every default, as a fresh object. */
export function defaultConfig(): GatewayConfig {
  return withDefaults(ConfigSchema, {}) as GatewayConfig;
}

/**
 * Merges `raw` over the defaults and checks it against the schema. Throws CONFIG_INVALID listing
 * every bad key with its path, prefixed with `source` (usually the file name).
 */
export function validateConfig(raw: unknown, source = 'config'): GatewayConfig {
  if (!isRecord(raw)) throw new GatewayError('CONFIG_INVALID', `${source}: expected a JSON object`);
  const merged = withDefaults(ConfigSchema, raw);
  const found = issues(ConfigSchema, merged);
  if (found.length > 0) {
    throw new GatewayError('CONFIG_INVALID', `${source}: ${found.map((i) => (i.message === 'unknown field' ? `${i.path}: unknown key` : issueText(i))).join('; ')}`);
  }
  return merged as GatewayConfig;
}
