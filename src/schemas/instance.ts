import Type, { type Static } from 'typebox';
import { CHAT_ID_PATTERN, E164_PATTERN, IsoTime, Phone, Quota, closed } from './common.js';
import { EVENT_TYPES, InstanceStatusSchema } from './events.js';
import { MAX_CREDITS, MAX_PREMIUM_DAYS } from '../domain/limits.js';

export const EventTypeSchema = Type.Enum([...EVENT_TYPES]);

/** Bounds of a webhook's custom headers and chat filters (src/webhooks/custom-headers.ts, chat-filters.ts check them). */
export const WEBHOOK_LIMITS = { headers: 10, headerName: 100, headerValue: 4096, headerBytes: 8192, chats: 500 } as const;

/** One custom header sent with every delivery; an array, not a map, so both engines keep their order. */
export const StoredHeaderSchema = closed({
  name: Type.String({ minLength: 1, maxLength: WEBHOOK_LIMITS.headerName }),
  value: Type.String({ minLength: 1, maxLength: WEBHOOK_LIMITS.headerValue }),
});

/** Which chats' events reach the webhook: chat ids (phones normalised to their JIDs when set). */
export const WebhookFiltersSchema = closed({
  ignoreGroups: Type.Boolean({ description: 'Events about a group chat (`@g.us`) are not delivered.' }),
  onlyChats: Type.Union([Type.Array(Type.String(), { maxItems: WEBHOOK_LIMITS.chats }), Type.Null()], { description: 'Only events about these chats are delivered (null: any chat).' }),
  ignoreChats: Type.Array(Type.String(), { maxItems: WEBHOOK_LIMITS.chats, description: 'Events about these chats are not delivered.' }),
});
export type WebhookFilters = Static<typeof WebhookFiltersSchema>;

/**
 * Where an instance's events go. The secret and the custom header values are kept in clear (they
 * sign and authorise deliveries); the file is 0600. `headers` and `filters` are absent on records
 * written before they existed, and when unset.
 */
export const WebhookSettingsSchema = closed({
  url: Type.String({ minLength: 1, maxLength: 2048 }),
  secret: Type.Union([Type.String({ minLength: 1, maxLength: 512 }), Type.Null()]),
  /** null = every event type. */
  events: Type.Union([Type.Array(EventTypeSchema), Type.Null()]),
  headers: Type.Optional(Type.Array(StoredHeaderSchema, { maxItems: WEBHOOK_LIMITS.headers })),
  filters: Type.Optional(WebhookFiltersSchema),
});
export type WebhookSettings = Static<typeof WebhookSettingsSchema>;

/**
 * An instance's settings as stored (GET|PUT /api/{id}/settings; src/settings/ gives the defaults of
 * what is absent). `proxy` keeps its user and password: the record is 0600 on disk like the webhook
 * secret, and the API never shows them back.
 */
export const StoredSettingsSchema = closed({
  calls: Type.Optional(closed({ autoReject: Type.Boolean(), rejectMessage: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })) })),
  alwaysOnline: Type.Optional(Type.Boolean()),
  autoRead: Type.Optional(Type.Boolean()),
  ignoreGroups: Type.Optional(Type.Boolean()),
  ignoreStatus: Type.Optional(Type.Boolean()),
  syncFullHistory: Type.Optional(Type.Boolean()),
  proxy: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 2048 }), Type.Null()])),
});
export type StoredSettings = Static<typeof StoredSettingsSchema>;

/** One instance as stored in instances.json: cold data that changes rarely. */
export const InstanceRecordSchema = closed({
  id: Type.String(),
  name: Type.String(),
  owner: Type.String(),
  sandbox: Type.Boolean(),
  /** "sha256:<hex>" of the API key; the key itself is never stored. */
  keyHash: Type.String(),
  /**
   * The key a rotation replaced, still accepted until the new one is known to have been shown (its
   * answer was delivered, or the new key was used): a crash right after the rotation was stored
   * must not leave the holder with no working key.
   */
  retiringKeyHash: Type.Optional(Type.String()),
  createdAt: Type.String(),
  premiumUntil: Type.Union([Type.String(), Type.Null()]),
  webhook: Type.Union([WebhookSettingsSchema, Type.Null()]),
  /** Its settings (absent: every default). */
  settings: Type.Optional(StoredSettingsSchema),
  /** Set while the instance is being deleted: it is out of service, and a new delete finishes the job. */
  deleting: Type.Optional(Type.Literal(true)),
});
export type InstanceRecord = Static<typeof InstanceRecordSchema>;

export const InstancesDocSchema = closed({
  version: Type.Literal(1),
  instances: Type.Record(Type.String(), InstanceRecordSchema),
  /** Owners whose first instance already received the trial. */
  owners: Type.Record(Type.String(), closed({ trialInstanceId: Type.String(), trialGrantedAt: Type.String() })),
});
export type InstancesDoc = Static<typeof InstancesDocSchema>;

/** How the API shows a webhook: never the secret, never a header's value. */
export const WebhookView = closed({
  url: Type.String(),
  signed: Type.Boolean(),
  events: Type.Union([Type.Array(EventTypeSchema), Type.Literal('all')]),
  headers: Type.Array(Type.String(), { description: 'The names of the custom headers sent with every delivery (their values are never shown).' }),
  filters: WebhookFiltersSchema,
});

/** An instance as the admin routes and the CLI show it. */
export const InstanceView = closed({
  instanceId: Type.String(),
  name: Type.String(),
  owner: Type.String(),
  sandbox: Type.Boolean(),
  status: InstanceStatusSchema,
  reason: Type.Union([Type.String(), Type.Null()]),
  premium: Type.Boolean(),
  premiumUntil: Type.Union([IsoTime, Type.Null()]),
  credits: Type.Integer({ minimum: 0 }),
  quotaRemaining: Quota,
  createdAt: IsoTime,
  webhook: Type.Union([WebhookView, Type.Null()]),
  node: Type.Union([Type.String(), Type.Null()], { description: 'The node that runs the instance now (several hosts on PostgreSQL); null on one host, or while it moves.' }),
});
export type InstanceViewT = Static<typeof InstanceView>;

/** The status and plan of one instance (GET /api/{id}/status). */
export const StatusBody = closed({
  success: Type.Literal(true),
  instanceId: Type.String(),
  status: InstanceStatusSchema,
  reason: Type.Union([Type.String(), Type.Null()], {
    description:
      'Why, in a few words (the last connection event). While retrying it names the cause and the next retry (`connection closed (408) (socket hang up); retry 2 of 20 in 4 s`); when WhatsApp cannot be reached at all, the DNS, connect or TLS error (`WhatsApp cannot be reached (getaddrinfo ENOTFOUND web.whatsapp.com); retry 1 of 20 in 1 s`). For people: do not parse it.',
  }),
  premium: Type.Boolean(),
  premiumUntil: Type.Union([IsoTime, Type.Null()]),
  quotaRemaining: Quota,
});

/** One instance with `success` (admin routes). */
export const InstanceBody = Type.Object({ success: Type.Literal(true), ...InstanceView.properties }, { additionalProperties: false });
export const InstanceWithKeyBody = Type.Object(
  { success: Type.Literal(true), ...InstanceView.properties, apiKey: Type.String({ description: 'The API key, shown once.' }) },
  { additionalProperties: false },
);

const WebhookSecretInput = Type.String({ minLength: 1, maxLength: 512, description: 'Signs deliveries. `whsec_<base64>` (at least 24 bytes) is the Standard Webhooks form.' });

/** A chat a filter names: a chat id, or an E.164 phone (stored as its `@s.whatsapp.net` JID). */
const FilterChat = Type.String({
  pattern: `^(${E164_PATTERN.slice(1, -1)}|${CHAT_ID_PATTERN.slice(2, -2)})$`,
  description: 'A chat id (`...@s.whatsapp.net`, `...@lid`, `...@g.us`) or an E.164 phone (stored as its `@s.whatsapp.net` JID).',
  examples: ['+15551234567', '120363041234567890@g.us'],
});

const WebhookFiltersInput = closed(
  {
    ignoreGroups: Type.Optional(Type.Boolean({ description: 'Leave out events about group chats.' })),
    onlyChats: Type.Optional(Type.Union([Type.Array(FilterChat, { maxItems: WEBHOOK_LIMITS.chats }), Type.Null()], { description: 'Deliver only events about these chats (null or absent: any chat).' })),
    ignoreChats: Type.Optional(Type.Array(FilterChat, { maxItems: WEBHOOK_LIMITS.chats, description: 'Leave out events about these chats.' })),
  },
  { description: 'Which chats\' events are delivered; replaces the stored filters whole (absent keys are off). Events about no chat (`instance.status`, `qr.updated`, a label edit) are always delivered.' },
);

const WebhookHeadersInput = Type.Record(Type.String(), Type.String({ minLength: 1, maxLength: WEBHOOK_LIMITS.headerValue }), {
  maxProperties: WEBHOOK_LIMITS.headers,
  description: `Up to ${WEBHOOK_LIMITS.headers} headers sent with every delivery (e.g. \`Authorization\`); replaces the stored set whole. Names are HTTP tokens; hop-by-hop names, \`Host\`, \`Content-Length\`, \`Content-Type\`, \`Expect\` and \`webhook-*\` are refused. Values: printable ASCII, at most ${WEBHOOK_LIMITS.headerValue} characters, ${WEBHOOK_LIMITS.headerBytes} bytes for all headers together; never shown back or logged.`,
});

export const CreateInstanceInput = closed({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  owner: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'The customer; the first instance of an owner gets the trial.' })),
  sandbox: Type.Optional(Type.Boolean({ description: 'A simulated connection for tests and integration work.' })),
  webhookUrl: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  webhookSecret: Type.Optional(WebhookSecretInput),
  webhookEvents: Type.Optional(Type.Array(EventTypeSchema, { minItems: 1, maxItems: EVENT_TYPES.length, uniqueItems: true })),
  webhookHeaders: Type.Optional(WebhookHeadersInput),
  webhookFilters: Type.Optional(WebhookFiltersInput),
  credits: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_CREDITS })),
  premiumDays: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_PREMIUM_DAYS, description: 'Premium days on top of any trial.' })),
});

export const WebhookInput = closed({
  url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'Required when the instance has no webhook yet.' })),
  secret: Type.Optional(Type.Union([WebhookSecretInput, Type.Null()], { description: 'Absent: keep the current secret; null: remove it.' })),
  events: Type.Optional(Type.Union([Type.Array(EventTypeSchema, { minItems: 1, maxItems: EVENT_TYPES.length, uniqueItems: true }), Type.Null()], { description: 'Absent: keep; null: every event type.' })),
  headers: Type.Optional(Type.Union([WebhookHeadersInput, Type.Null()], { description: 'Absent: keep; null or {}: none.' })),
  filters: Type.Optional(Type.Union([WebhookFiltersInput, Type.Null()], { description: 'Absent: keep; null or {}: every chat.' })),
});

export const WebhookBody = closed({
  success: Type.Literal(true),
  instanceId: Type.String(),
  webhook: Type.Union([WebhookView, Type.Null()]),
});

export const ListInstancesQuery = closed({
  owner: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
  cursor: Type.Optional(Type.String({ maxLength: 200, description: 'nextCursor of the previous page.' })),
});

export const InstanceListBody = closed({
  success: Type.Literal(true),
  instances: Type.Array(InstanceView),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});

export const CreditsInput = closed({
  add: Type.Integer({
    minimum: -MAX_CREDITS,
    maximum: MAX_CREDITS,
    not: { const: 0 },
    description: 'Credits to add; a negative number refunds them (down to the credits no send holds: 409 INSUFFICIENT_CREDITS below that).',
  }),
});
export const PremiumInput = closed({ days: Type.Integer({ minimum: 1, maximum: MAX_PREMIUM_DAYS }) });
export const PairingCodeInput = closed({ phone: Phone });

export const DeletedBody = closed({
  success: Type.Literal(true),
  instanceId: Type.String(),
  deleted: Type.Literal(true),
  logout: Type.Enum(['logged-out', 'not-paired', 'unreachable', 'not-connected', 'failed'], {
    description: 'What became of the WhatsApp device: unreachable means remove it on the phone (Linked devices).',
  }),
});
