import Type, { type Static } from 'typebox';
import { MAX_CREDITS, MAX_PREMIUM_DAYS } from '../domain/limits.js';

/**
 * config.json: every key, its type, bounds and default, in one schema. It gives the TypeScript
 * type, the runtime check (unknown keys refused, each error naming its path) and the defaults.
 */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const int = (minimum: number, def: number, description: string, maximum = Number.MAX_SAFE_INTEGER) =>
  Type.Integer({ minimum, maximum, default: def, description });
const bool = (def: boolean, description: string) => Type.Boolean({ default: def, description });
const section = <P extends Record<string, import('typebox').TSchema>>(properties: P, description: string) =>
  Type.Object(properties, { additionalProperties: false, default: {}, description });

const LogLevel = (def: (typeof LOG_LEVELS)[number], description: string) => Type.Enum([...LOG_LEVELS], { default: def, description });

export const ConfigSchema = Type.Object(
  {
    host: Type.String({ pattern: '^[A-Za-z0-9.:\\-\\[\\]]{1,255}$', default: '127.0.0.1', description: 'Address to listen on (loopback by default).' }),
    port: int(0, 8080, 'Port to listen on (0 = any free port).', 65535),
    serverSecretHash: Type.Union([Type.String({ pattern: '^sha256:[0-9a-f]{64}$' }), Type.Null()], {
      default: null,
      description: '"sha256:<hex>" of the server secret (X-API-Secret); written by `gateway init`.',
    }),
    retiringServerSecretHash: Type.Union([Type.String({ pattern: '^sha256:[0-9a-f]{64}$' }), Type.Null()], {
      default: null,
      description: 'The secret a rotation (`init --force`) replaced, still accepted until the new one was shown (printed, delivered or used); written and cleared by the gateway.',
    }),
    logLevel: LogLevel('info', 'Daemon log level.'),
    webhooks: section(
      {
        timeoutMs: int(100, 10_000, 'How long a receiver may take to answer.', 600_000),
        retryDelaysMs: Type.Array(Type.Integer({ minimum: 0, maximum: 2_592_000_000 }), {
          maxItems: 50,
          default: [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000],
          description: 'Waits before each retry (one attempt plus one retry per entry), +-20 % jitter.',
        }),
        allowPrivateTargets: bool(false, 'Allow webhook URLs that resolve to loopback, private or other non-global addresses.'),
        maxPendingPerInstance: int(1, 10_000, 'Undelivered events kept per instance; past it the oldest pending are marked failed.'),
        historyPerInstance: int(0, 200, 'Finished deliveries kept per instance for `webhook deliveries`.'),
        concurrency: int(1, 64, 'Deliveries in flight at once, all instances together.', 1024),
      },
      'Webhook delivery.',
    ),
    media: section(
      {
        maxBytes: int(1, 16 * 1024 * 1024, 'Largest file send-media accepts, and largest received file the gateway downloads (bigger ones are announced with media.url null).'),
        keepDays: int(0, 7, 'Days inbound and sent media are kept for GET /messages/{id}/media.', 3650),
        maxStoreBytes: int(0, 1024 * 1024 * 1024, 'Bytes of stored media per instance; the oldest go first past it.'),
        fetchTimeoutMs: int(100, 30_000, 'How long send-media may take to fetch a `url` (the whole download).', 600_000),
        ffmpegPath: Type.String({ minLength: 1, maxLength: 4096, default: 'ffmpeg', description: 'The ffmpeg program that turns audio into Opus voice notes (`"as": "voice"`); a name looked up in PATH, or a path.' }),
      },
      'Media limits and storage.',
    ),
    history: section(
      {
        enabled: bool(true, 'Keep the conversation history (GET /chats, /chats/{chatId}/messages).'),
        days: int(1, 30, 'Days a message is kept.', 3650),
        maxMessagesPerChat: int(1, 200, 'Messages kept per chat; the oldest go first.', 100_000),
      },
      'Conversation history and message lifecycle.',
    ),
    plans: section(
      {
        trialDays: int(0, 30, 'Premium days for the first instance of an owner.', MAX_PREMIUM_DAYS),
        initialCredits: int(0, 0, 'Credits every new instance starts with.', MAX_CREDITS),
      },
      'Plans and credits.',
    ),
    rateLimit: section(
      {
        authFailures: int(1, 20, 'Failed authentications per client address per window before answering 429.'),
        authWindowMs: int(1, 60_000, 'The window of authFailures.'),
        sendsPerMinute: int(0, 0, 'Sends per instance per minute; 0 = off.'),
      },
      'Rate limits.',
    ),
    sending: section(
      {
        minIntervalMs: int(0, 400, 'Minimum gap between two sends of one WhatsApp instance.'),
        jitterMs: int(0, 400, 'Random extra gap, up to this.'),
        maxWaitMs: int(0, 30_000, 'A send that cannot start within this wait is answered 429.'),
        typing: bool(false, 'Show "typing..." before each message.'),
      },
      'Anti-ban pacing of WhatsApp sends.',
    ),
    baileys: section(
      {
        version: Type.Union([Type.Tuple([Type.Integer({ minimum: 0 }), Type.Integer({ minimum: 0 }), Type.Integer({ minimum: 0 })]), Type.Null()], {
          default: null,
          description: 'WhatsApp Web version [major, minor, patch]; null = the version bundled with Baileys.',
        }),
        webSocketUrl: Type.Union([Type.String({ pattern: '^wss?://' }), Type.Null()], { default: null, description: 'WhatsApp server URL; null = WhatsApp itself.' }),
        maxReconnectAttempts: int(1, 20, 'Reconnects in a row before giving up.'),
        maxQrRefreshes: int(1, 5, 'QR codes shown before pairing gives up.'),
        reconnectBaseMs: int(0, 1_000, 'First reconnect backoff.'),
        reconnectMaxMs: int(0, 60_000, 'Longest reconnect backoff.'),
        logLevel: LogLevel('warn', "Baileys' own log level."),
        maxConcurrentConnects: int(1, 8, 'Connections opened at once at start-up (a restart never storms WhatsApp).', 1000),
        maxConcurrentLogins: int(1, 16, 'WhatsApp logins in flight at once, all instances together, at start-up and on every reconnect (a dropped network never becomes a storm of handshakes).', 1000),
        sessionThreads: int(0, 2, "Threads the daemon runs its WhatsApp sessions on, each with a heap of its own and below the daemon's priority, so that pairing and syncing accounts never stall the API, the stores and the webhooks (0: on the daemon's own thread, as before 2026-12-01).", 16),
      },
      'The WhatsApp connection.',
    ),
    instances: section(
      {
        tenantsMayProxy: bool(false, "Whether an instance key may set its instance's `proxy` setting (PUT /api/{id}/settings); the server secret always may."),
      },
      'Instances and their settings.',
    ),
    flows: section({ handoverTimeoutMinutes: int(1, 60, 'Minutes a handover mutes the bot unless released earlier.') }, 'Chatbot flows.'),
    metrics: section({ mode: Type.Enum(['off', 'local', 'public'], { default: 'local', description: 'Who may read /metrics.' }) }, 'Prometheus metrics.'),
    events: section({ maxClientsPerInstance: int(1, 10, 'Live event (SSE) clients per instance.', 1000) }, 'Live events.'),
    storage: section(
      {
        postgres: section(
          {
            url: Type.Union([Type.String({ pattern: '^postgres(ql)?://', maxLength: 2048 }), Type.Null()], {
              default: null,
              description: 'postgres://user:password@host:port/database: every durable thing goes there, and every daemon using the same database is one gateway (env GATEWAY_DATABASE_URL). null: the files in this data dir.',
            }),
          },
          'PostgreSQL (several hosts).',
        ),
      },
      'Where the gateway keeps its state.',
    ),
    cluster: section(
      {
        nodeId: Type.Union([Type.String({ pattern: '^[A-Za-z0-9._:-]{1,100}$' }), Type.Null()], { default: null, description: 'This node (default hostname:port).' }),
        advertiseUrl: Type.Union([Type.String({ pattern: '^https?://', maxLength: 2048 }), Type.Null()], { default: null, description: 'How the other nodes reach this one (default http://HOST:PORT).' }),
        secret: Type.Union([Type.String({ minLength: 16, maxLength: 200 }), Type.Null()], {
          default: null,
          description: 'The cluster secret: node-to-node calls carry it (env GATEWAY_CLUSTER_SECRET); written by `gateway init --database`.',
        }),
        leaseTtlMs: int(3_000, 15_000, 'How long an instance stays with a node that stopped renewing; its instances move within this.', 600_000),
      },
      'Several hosts: this node of the gateway.',
    ),
    audit: section({ keepDays: int(1, 90, 'Days an entry of the audit log (GET /api/audit) is kept.', 3650) }, 'The audit log.'),
    panel: section(
      {
        enabled: bool(true, 'Serve the web panel at /panel/.'),
        sessionIdleMinutes: int(1, 720, 'Minutes of inactivity after which a panel session ends.', 43_200),
      },
      'The web panel.',
    ),
  },
  { additionalProperties: false },
);

export type GatewayConfig = Static<typeof ConfigSchema>;
export type LogLevel = (typeof LOG_LEVELS)[number];
