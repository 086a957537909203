import { UserError } from '../domain/errors.js';
import { isRecord } from '../domain/guards.js';
import { defaultConfig, LOG_LEVELS, type GatewayConfig } from './schema.js';

type Check = (value: unknown, path: string) => string | null;

const int = (min: number, max = Number.MAX_SAFE_INTEGER): Check => (v) =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max ? null : `expected an integer from ${min} to ${max}`;
const bool: Check = (v) => (typeof v === 'boolean' ? null : 'expected true or false');
const oneOf = (values: readonly string[]): Check => (v) =>
  typeof v === 'string' && values.includes(v) ? null : `expected one of ${values.map((x) => JSON.stringify(x)).join(', ')}`;
const nullable = (inner: Check): Check => (v, p) => (v === null ? null : inner(v, p));
const intArray = (min: number, minLength: number): Check => (v, p) => {
  if (!Array.isArray(v) || v.length < minLength) return `expected an array of at least ${minLength} integers`;
  for (const [i, x] of v.entries()) {
    const e = int(min)(x, `${p}[${i}]`);
    if (e) return `[${i}] ${e}`;
  }
  return null;
};
const wsUrl: Check = (v) => {
  if (typeof v !== 'string') return 'expected a ws:// or wss:// URL';
  try {
    const u = new URL(v);
    return u.protocol === 'ws:' || u.protocol === 'wss:' ? null : 'expected a ws:// or wss:// URL';
  } catch {
    return 'expected a ws:// or wss:// URL';
  }
};
const host: Check = (v) => (typeof v === 'string' && /^[A-Za-z0-9.:\-[\]]{1,255}$/.test(v) ? null : 'expected a host name or IP address');
const secretHash: Check = (v) => (typeof v === 'string' && /^sha256:[0-9a-f]{64}$/.test(v) ? null : 'expected "sha256:<64 hex digits>" (run gateway init)');

/** A schema node is either a leaf check or an object of nodes. */
type Schema = Check | { [key: string]: Schema };

const SCHEMA: Schema = {
  host,
  port: int(0, 65535),
  serverSecretHash: nullable(secretHash),
  logLevel: oneOf(LOG_LEVELS),
  webhooks: {
    timeoutMs: int(100, 600_000),
    retryDelaysMs: intArray(0, 0),
    allowPrivateTargets: bool,
    maxPendingPerInstance: int(1),
    historyPerInstance: int(0),
    concurrency: int(1, 1024),
  },
  media: { maxBytes: int(1) },
  plans: { trialDays: int(0, 36_500), initialCredits: int(0) },
  rateLimit: { authFailures: int(1), authWindowMs: int(1), sendsPerMinute: int(0) },
  sending: { minIntervalMs: int(0), jitterMs: int(0), maxWaitMs: int(0), typing: bool },
  baileys: {
    version: nullable((v) => (Array.isArray(v) && v.length === 3 && v.every((x) => Number.isInteger(x) && x >= 0) ? null : 'expected [major, minor, patch]')),
    webSocketUrl: nullable(wsUrl),
    maxReconnectAttempts: int(1),
    maxQrRefreshes: int(1),
    reconnectBaseMs: int(0),
    reconnectMaxMs: int(0),
    logLevel: oneOf(LOG_LEVELS),
  },
  flows: { handoverTimeoutMinutes: int(1) },
  metrics: { mode: oneOf(['off', 'local', 'public']) },
};


function walk(schema: Schema, value: unknown, defaults: unknown, path: string, errors: string[]): unknown {
  if (typeof schema === 'function') {
    const err = schema(value, path);
    if (err) errors.push(`${path}: ${err}, got ${JSON.stringify(value)}`);
    return value;
  }
  if (!isRecord(value)) {
    errors.push(`${path || 'config'}: expected an object, got ${JSON.stringify(value)}`);
    return defaults;
  }
  const out: Record<string, unknown> = {};
  const defs = defaults as Record<string, unknown>;
  for (const key of Object.keys(value)) {
    if (!Object.hasOwn(schema, key)) errors.push(`${path ? `${path}.` : ''}${key}: unknown key`);
  }
  for (const [key, sub] of Object.entries(schema)) {
    const childPath = path ? `${path}.${key}` : key;
    out[key] = Object.hasOwn(value, key) ? walk(sub, value[key], defs[key], childPath, errors) : defs[key];
  }
  return out;
}

/**
 * Merges `raw` over the defaults and validates it. Throws a UserError listing every bad key
 * (prefixed with `source`, usually the file name).
 */
export function validateConfig(raw: unknown, source = 'config'): GatewayConfig {
  const errors: string[] = [];
  const merged = walk(SCHEMA, raw, defaultConfig(), '', errors) as GatewayConfig;
  if (errors.length > 0) throw new UserError(`${source}: ${errors.join('; ')}`, 2);
  return merged;
}
