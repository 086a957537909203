import { GatewayError } from '../domain/errors.js';
import { WEBHOOK_LIMITS } from '../schemas/instance.js';

/** A custom header as stored with the webhook. */
export interface CustomHeader {
  name: string;
  value: string;
}

/** RFC 9110 `token`: what a field name may be. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Printable ASCII, space and tab: no CR/LF (header injection) and nothing Node would refuse or mangle. */
const FIELD_VALUE = /^[\t\x20-\x7e]+$/;

/**
 * Names a receiver must not get from the instance: they belong to one hop or to the connection
 * (`Connection`, `Keep-Alive`, `Proxy-*`, `TE`, `Trailer`, `Transfer-Encoding`, `Upgrade`, `Host`),
 * describe the body the gateway writes (`Content-Length`, `Content-Type`), change the exchange
 * (`Expect`), or are the Standard Webhooks headers the receiver verifies (`webhook-*`).
 */
const REFUSED = new Set(['connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'content-length', 'content-type', 'expect']);

/** Why `name` may not be a custom header, or null when it may. */
export function refusedName(name: string): string | null {
  if (!TOKEN.test(name)) return 'is not a valid header name (an HTTP token: letters, digits and !#$%&\'*+-.^_`|~)';
  const lower = name.toLowerCase();
  if (REFUSED.has(lower)) return 'is set by the gateway or belongs to the connection (hop-by-hop), not to the receiver';
  if (lower.startsWith('webhook-')) return 'is reserved for the Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature)';
  if (lower.startsWith('proxy-')) return 'is a proxy header (hop-by-hop), not for the receiver';
  return null;
}

/**
 * The headers of `PUT /webhook` as stored: every name allowed, no name twice (whatever its case),
 * every value printable ASCII, the whole set within WEBHOOK_LIMITS. A 400 `INVALID_FIELD` names
 * the header at fault and never quotes its value.
 */
export function checkHeaders(input: Record<string, string>, field = 'headers'): CustomHeader[] {
  const entries = Object.entries(input);
  if (entries.length > WEBHOOK_LIMITS.headers) throw new GatewayError('INVALID_FIELD', `${field}: at most ${WEBHOOK_LIMITS.headers} headers`);
  const seen = new Set<string>();
  let bytes = 0;
  const out: CustomHeader[] = [];
  for (const [name, value] of entries) {
    // Names are shown back in the error (they are not secret); bounded and made printable first.
    const shown = JSON.stringify(name.slice(0, WEBHOOK_LIMITS.headerName));
    if (name.length > WEBHOOK_LIMITS.headerName) throw new GatewayError('INVALID_FIELD', `${field}: header ${shown}... is longer than ${WEBHOOK_LIMITS.headerName} characters`);
    const why = refusedName(name);
    if (why) throw new GatewayError('INVALID_FIELD', `${field}: header ${shown} ${why}`);
    if (seen.has(name.toLowerCase())) throw new GatewayError('INVALID_FIELD', `${field}: header ${shown} is given twice (names are case-insensitive)`);
    seen.add(name.toLowerCase());
    if (typeof value !== 'string' || value.length === 0) throw new GatewayError('INVALID_FIELD', `${field}: header ${shown} needs a value`);
    if (value.length > WEBHOOK_LIMITS.headerValue) throw new GatewayError('INVALID_FIELD', `${field}: the value of header ${shown} is longer than ${WEBHOOK_LIMITS.headerValue} characters`);
    if (!FIELD_VALUE.test(value)) throw new GatewayError('INVALID_FIELD', `${field}: the value of header ${shown} may hold printable ASCII, spaces and tabs only (no CR, LF or other control characters)`);
    bytes += name.length + value.length;
    out.push({ name, value });
  }
  if (bytes > WEBHOOK_LIMITS.headerBytes) throw new GatewayError('INVALID_FIELD', `${field}: the headers come to ${bytes} bytes; at most ${WEBHOOK_LIMITS.headerBytes} (receivers refuse larger header blocks)`);
  return out;
}

/**
 * The stored headers an attempt sends. Checked again (a hand-edited store must not smuggle a
 * `webhook-signature` or a CR/LF onto the wire): a header that would not pass is left out.
 */
export function sendableHeaders(headers: readonly CustomHeader[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers) return out;
  for (const h of headers) {
    if (refusedName(h.name) === null && FIELD_VALUE.test(h.value)) out[h.name] = h.value;
  }
  return out;
}
