/**
 * The config schema: every key, its type and default. `validateConfig` rejects unknown keys and
 * wrong types with the key's path in the message ("webhooks.retryDelaysMs[2]: expected ...").
 */
export interface GatewayConfig {
  host: string;
  port: number;
  /** "sha256:<hex>" of the server secret (X-API-Secret); written by init. */
  serverSecretHash: string | null;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  webhooks: {
    timeoutMs: number;
    retryDelaysMs: number[];
    allowPrivateTargets: boolean;
    /** Undelivered events kept per instance; past it the oldest pending are marked failed. */
    maxPendingPerInstance: number;
    /** Finished (delivered or failed) deliveries kept per instance for `webhook deliveries`. */
    historyPerInstance: number;
    concurrency: number;
  };
  media: { maxBytes: number };
  plans: { trialDays: number; initialCredits: number };
  rateLimit: {
    /** Failed authentications per client address per window before answering 429. */
    authFailures: number;
    authWindowMs: number;
    /** Sends per instance per minute; 0 = off. */
    sendsPerMinute: number;
  };
  sending: {
    /** Minimum gap between two sends of one (non-sandbox) instance. */
    minIntervalMs: number;
    jitterMs: number;
    /** A send that cannot start within this wait is answered 429. */
    maxWaitMs: number;
    /** Show "typing..." before each message (non-sandbox). */
    typing: boolean;
  };
  baileys: {
    version: [number, number, number] | null;
    webSocketUrl: string | null;
    maxReconnectAttempts: number;
    maxQrRefreshes: number;
    reconnectBaseMs: number;
    reconnectMaxMs: number;
    logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  };
  flows: { handoverTimeoutMinutes: number };
  metrics: { mode: 'off' | 'local' | 'public' };
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export function defaultConfig(): GatewayConfig {
  return {
    host: '127.0.0.1',
    port: 8080,
    serverSecretHash: null,
    logLevel: 'info',
    webhooks: {
      timeoutMs: 10_000,
      retryDelaysMs: [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000],
      allowPrivateTargets: false,
      maxPendingPerInstance: 10_000,
      historyPerInstance: 200,
      concurrency: 64,
    },
    media: { maxBytes: 16 * 1024 * 1024 },
    plans: { trialDays: 30, initialCredits: 0 },
    rateLimit: { authFailures: 20, authWindowMs: 60_000, sendsPerMinute: 0 },
    sending: { minIntervalMs: 400, jitterMs: 400, maxWaitMs: 30_000, typing: false },
    baileys: {
      version: null,
      webSocketUrl: null,
      maxReconnectAttempts: 20,
      maxQrRefreshes: 5,
      reconnectBaseMs: 1_000,
      reconnectMaxMs: 60_000,
      logLevel: 'warn',
    },
    flows: { handoverTimeoutMinutes: 60 },
    metrics: { mode: 'local' },
  };
}
