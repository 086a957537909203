import { GatewayError, errorMessage } from '../domain/errors.js';
import type { EventType } from '../domain/types.js';
import type { WebhookSettings } from '../schemas/instance.js';
import { filtersView, normaliseFilters, type FiltersInput } from './chat-filters.js';
import { checkHeaders } from './custom-headers.js';
import { checkWebhookUrl } from './target-policy.js';

/**
 * What a caller may change; absent fields keep their value, `secret: null` removes the secret,
 * `headers` and `filters` replace the stored ones whole (null: none).
 */
export interface WebhookChange {
  url?: string | undefined;
  secret?: string | null | undefined;
  events?: EventType[] | null | undefined;
  headers?: Record<string, string> | null | undefined;
  filters?: FiltersInput | null | undefined;
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
  fields: { url: string; secret: string; headers?: string } = { url: 'url', secret: 'secret' },
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
  const headers = change.headers === undefined ? current?.headers : change.headers === null ? [] : checkHeaders(change.headers, fields.headers ?? 'headers');
  const filters = change.filters === undefined ? current?.filters : normaliseFilters(change.filters);
  return { url, secret, events, ...(headers && headers.length > 0 ? { headers } : {}), ...(filters ? { filters } : {}) };
}

/** Whether an attempt would send other custom headers under `next` than under `current`. */
export function headersChanged(current: WebhookSettings | null, next: WebhookSettings | null): boolean {
  const a = current?.headers ?? [];
  const b = next?.headers ?? [];
  return a.length !== b.length || a.some((h, i) => h.name !== b[i]!.name || h.value !== b[i]!.value);
}

/** How the API shows a webhook: never the secret, and of the custom headers only their names. */
export function webhookView(w: WebhookSettings | null) {
  return w === null
    ? null
    : { url: w.url, signed: w.secret !== null, events: w.events ?? ('all' as const), headers: (w.headers ?? []).map((h) => h.name), filters: filtersView(w.filters) };
}
