import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Operator passwords: scrypt with a per-password salt (node:crypto), stored as
 * `scrypt$N$r$p$<salt base64url>$<hash base64url>` so the cost can be raised later without
 * breaking stored ones. Unlike API keys (long random tokens, one SHA-256 is enough) a password
 * may be chosen by a person, so it gets a slow, memory-hard KDF.
 */
const COST = { N: 16_384, r: 8, p: 1 } as const;
const KEY_BYTES = 32;
const SALT_BYTES = 16;
/** scrypt needs 128 * N * r bytes (16 MiB here); Node's default ceiling is 32 MiB. */
const MAX_MEM = 64 * 1024 * 1024;

function derive(password: string, salt: Buffer, cost: { N: number; r: number; p: number }): Promise<Buffer> {
  const options: ScryptOptions = { N: cost.N, r: cost.r, p: cost.p, maxmem: MAX_MEM };
  return new Promise((resolve, reject) => scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (err, key) => (err ? reject(err) : resolve(key))));
}

/** The stored form of `password`. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, COST);
  return `scrypt$${COST.N}$${COST.r}$${COST.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

const FORMAT = /^scrypt\$(\d{1,7})\$(\d{1,3})\$(\d{1,3})\$([A-Za-z0-9_-]{8,64})\$([A-Za-z0-9_-]{16,128})$/;

/** A stored hash of nothing: an unknown operator costs the same scrypt as a known one. */
let dummy: Promise<string> | null = null;

/**
 * Whether `password` matches `stored` (constant-time compare). A missing `stored` (no such
 * operator) still runs one scrypt, so the answer's timing does not tell whether a name exists.
 */
export async function verifyPassword(password: string | undefined, stored: string | null | undefined): Promise<boolean> {
  dummy ??= hashPassword(randomBytes(16).toString('base64url'));
  const m = FORMAT.exec(stored ?? '') ?? FORMAT.exec(await dummy);
  if (!m) return false;
  const cost = { N: Number(m[1]), r: Number(m[2]), p: Number(m[3]) };
  // A stored cost out of bounds (a damaged file) is refused rather than run.
  if (cost.N < 2 || cost.N > 1 << 20 || (cost.N & (cost.N - 1)) !== 0 || cost.r < 1 || cost.r > 32 || cost.p < 1 || cost.p > 16) return false;
  const expected = Buffer.from(m[5]!, 'base64url');
  const actual = await derive(password ?? '', Buffer.from(m[4]!, 'base64url'), cost).catch(() => null);
  if (!actual) return false;
  const same = expected.length === actual.length && timingSafeEqual(expected, actual);
  return same && typeof password === 'string' && password.length > 0 && typeof stored === 'string';
}

/** A new one-time password: 144 random bits, URL-safe (24 characters). */
export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}
