import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Recognisable prefixes, so leaked keys are easy to spot in logs and secret scanners. */
export const API_KEY_PREFIX = 'gw_live_';
export const SERVER_SECRET_PREFIX = 'gw_secret_';

/** 192 random bits, URL-safe. */
export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(24).toString('base64url');
}

/** 256 random bits. */
export function generateServerSecret(): string {
  return SERVER_SECRET_PREFIX + randomBytes(32).toString('base64url');
}

/** Short ids for instances: 72 random bits, URL-safe, never guessable into existence. */
export function generateInstanceId(): string {
  return `inst_${randomBytes(9).toString('base64url')}`;
}

/**
 * Keys are long random tokens, so one SHA-256 is enough (a slow KDF protects low-entropy
 * passwords, which these are not) and keeps every authenticated request cheap.
 */
export function hashSecret(secret: string): string {
  // One-shot: no Hash object a request (each a native object the collector frees in its pauses).
  return `sha256:${hash('sha256', secret, 'hex')}`;
}

const DUMMY_HASH = hashSecret('no such key');

/** Constant-time check of `secret` against a stored hash; a missing hash still costs one compare. */
export function verifySecret(secret: string | undefined, storedHash: string | null | undefined): boolean {
  const expected = Buffer.from(storedHash ?? DUMMY_HASH);
  const actual = Buffer.from(hashSecret(secret ?? ''));
  const same = expected.length === actual.length && timingSafeEqual(expected, actual);
  return same && typeof secret === 'string' && secret.length > 0 && storedHash != null;
}
