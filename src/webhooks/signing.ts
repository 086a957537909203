import { hmac } from '../domain/hmac.js';

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

/**
 * Decoded keys, each held by what owns its secret (the instance's webhook settings): gone with them
 * when the secret is rotated or the instance deleted (a WeakMap entry lives as long as its key
 * object), and decoded again when the secret changed in place. In its own memory, not a view of
 * Buffer's shared pool.
 */
const keys = new WeakMap<object, { secret: string; key: Buffer }>();

function keyOf(secret: string, owner: object | undefined): Buffer {
  if (owner === undefined) return signingKey(secret);
  const kept = keys.get(owner);
  if (kept !== undefined && kept.secret === secret) return kept.key;
  const decoded = signingKey(secret);
  const key = Buffer.alloc(decoded.length);
  decoded.copy(key);
  decoded.fill(0);
  keys.set(owner, { secret, key });
  return key;
}

/**
 * `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`. The HMAC is domain/hmac.ts's (two one-shot
 * hashes): a createHmac object and the secret's base64 decoding each were 3.4 % of the daemon's
 * CPU while it delivered a burst of 2,000 webhooks (`BENCH_ONLY=webhooks
 * BENCH_NODE_ARGS=--cpu-prof`, 2026-12-01), the same bytes (test/unit/webhook-signing.test.ts).
 * `owner`: the object that holds the secret, under which its decoded key is kept (see `keys`).
 */
export function signPayload(secret: string, id: string, timestampSeconds: number, body: string, owner?: object): string {
  const mac = hmac('sha256', keyOf(secret, owner), Buffer.from(`${id}.${timestampSeconds}.${body}`, 'utf8'));
  return `v1,${mac.toString('base64')}`;
}

/**
 * The headers of one attempt: the webhook's custom headers (which may replace the user-agent), then
 * the Standard Webhooks ones, last so that nothing custom overrides them (Node keeps the last of
 * names that differ in case only); no signature header without a secret.
 */
export function webhookHeaders(input: { id: string; timestampSeconds: number; body: string; secret: string | null; keyOwner?: object; userAgent: string; custom?: Record<string, string> }): Record<string, string> {
  const headers: Record<string, string> = {
    'user-agent': input.userAgent,
    ...input.custom,
    'content-type': 'application/json',
    'webhook-id': input.id,
    'webhook-timestamp': String(input.timestampSeconds),
  };
  if (input.secret) headers['webhook-signature'] = signPayload(input.secret, input.id, input.timestampSeconds, input.body, input.keyOwner);
  return headers;
}
