import { GatewayError, errorMessage } from '../domain/errors.js';
import type { EventType } from '../domain/types.js';
import type { WebhookSettings } from '../schemas/instance.js';
import { checkWebhookUrl } from './target-policy.js';

/** What a caller may change; absent fields keep their value, `secret: null` removes the secret. */
export interface WebhookChange {
  url?: string | undefined;
  secret?: string | null | undefined;
  events?: EventType[] | null | undefined;
}

const WHSEC = 'whsec_';
/** The Standard Webhooks verifiers refuse shorter keys (and the stock one throws on them). */
export const MIN_WHSEC_BYTES = 24;

/** Refuses a `whsec_` secret whose base64 does not decode to at least 24 bytes. */
export function checkSecret(secret: string, field: string): void {
  if (!secret.startsWith(WHSEC)) return;
  const body = secret.slice(WHSEC.length);
  const valid = /^[A-Za-z0-9+/]+={0,2}$/.test(body) && body.length % 4 === 0;
  if (!valid || Buffer.from(body, 'base64').length < MIN_WHSEC_BYTES) {
    throw new GatewayError('INVALID_FIELD', `${field}: a whsec_ secret must be whsec_ followed by base64 of at least ${MIN_WHSEC_BYTES} random bytes (e.g. whsec_$(openssl rand -base64 32))`);
  }
}

/**
 * The webhook after applying `change` to `current`: the URL passes the target policy (SSRF), a
 * `whsec_` secret decodes, and a URL alone keeps the secret and the events filter.
 */
export async function applyWebhookChange(
  current: WebhookSettings | null,
  change: WebhookChange,
  allowPrivateTargets: boolean,
  fields: { url: string; secret: string } = { url: 'url', secret: 'secret' },
): Promise<WebhookSettings> {
  const url = change.url ?? current?.url;
  if (url === undefined) throw new GatewayError('MISSING_FIELD', `${fields.url} is required: the instance has no webhook yet`);
  if (change.url !== undefined) {
    try {
      await checkWebhookUrl(change.url, allowPrivateTargets);
    } catch (err) {
      throw new GatewayError('INVALID_FIELD', `${fields.url}: ${errorMessage(err)}`);
    }
  }
  if (typeof change.secret === 'string') checkSecret(change.secret, fields.secret);
  const secret = change.secret === undefined ? (current?.secret ?? null) : change.secret;
  const events = change.events === undefined ? (current?.events ?? null) : change.events === null ? null : [...new Set(change.events)];
  return { url, secret, events };
}

/** How the API shows a webhook: never the secret. */
export function webhookView(w: WebhookSettings | null) {
  return w === null ? null : { url: w.url, signed: w.secret !== null, events: w.events ?? ('all' as const) };
}
