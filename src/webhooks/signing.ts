import { createHmac } from 'node:crypto';

const WHSEC_PREFIX = 'whsec_';

/**
 * The HMAC key of a webhook secret: `whsec_<base64>` is the Standard Webhooks form and keys with
 * the decoded bytes (what the `standardwebhooks` verifier does); anything else keys with its
 * UTF-8 bytes.
 */
export function signingKey(secret: string): Buffer {
  if (secret.startsWith(WHSEC_PREFIX)) {
    const decoded = Buffer.from(secret.slice(WHSEC_PREFIX.length), 'base64');
    if (decoded.length > 0) return decoded;
  }
  return Buffer.from(secret, 'utf8');
}

/** `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`. */
export function signPayload(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', signingKey(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/**
 * The headers of one attempt: the webhook's custom headers (which may replace the user-agent), then
 * the Standard Webhooks ones, last so that nothing custom overrides them (Node keeps the last of
 * names that differ in case only); no signature header without a secret.
 */
export function webhookHeaders(input: { id: string; timestampSeconds: number; body: string; secret: string | null; userAgent: string; custom?: Record<string, string> }): Record<string, string> {
  const headers: Record<string, string> = {
    'user-agent': input.userAgent,
    ...input.custom,
    'content-type': 'application/json',
    'webhook-id': input.id,
    'webhook-timestamp': String(input.timestampSeconds),
  };
  if (input.secret) headers['webhook-signature'] = signPayload(input.secret, input.id, input.timestampSeconds, input.body);
  return headers;
}
