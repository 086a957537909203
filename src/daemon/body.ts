import type { Context, Next } from 'koa';
import { koaBody } from 'koa-body';
import { GatewayError } from '../domain/errors.js';
import { isE164 } from '../domain/phone.js';

const parseJson = koaBody({
  json: true,
  jsonStrict: true,
  jsonLimit: '256kb',
  multipart: false,
  urlencoded: false,
  text: false,
  patchNode: false,
  patchKoa: true,
});

/** JSON bodies only: 415 for another content type, 400 INVALID_JSON, 413 past 256 KiB. */
export async function jsonBody(ctx: Context, next: Next): Promise<void> {
  const length = Number(ctx.get('content-length') || '0');
  const hasBody = length > 0 || ctx.get('transfer-encoding') !== '';
  if (hasBody && !ctx.is('application/json')) {
    throw new GatewayError('UNSUPPORTED_MEDIA_TYPE', 'send the body as application/json');
  }
  try {
    await parseJson(ctx, async () => undefined);
  } catch (err) {
    const status = (err as { status?: number }).status;
    if (status === 413) throw new GatewayError('PAYLOAD_TOO_LARGE', 'JSON body is larger than 256 KiB');
    if (status === 415) throw new GatewayError('UNSUPPORTED_MEDIA_TYPE', 'unsupported charset or content encoding');
    throw new GatewayError('INVALID_JSON', 'request body is not valid JSON');
  }
  await next();
}

/** The parsed JSON body as an object (empty when absent); arrays and scalars are refused. */
export function bodyObject(ctx: Context): Record<string, unknown> {
  const body: unknown = ctx.request.body;
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new GatewayError('INVALID_JSON', 'request body must be a JSON object');
  }
  return body as Record<string, unknown>;
}

export function requiredString(body: Record<string, unknown>, field: string, maxLength: number): string {
  const v = body[field];
  if (v === undefined || v === null || v === '') throw new GatewayError('MISSING_FIELD', `${field} is required`);
  if (typeof v !== 'string') throw new GatewayError('INVALID_FIELD', `${field} must be a string`);
  if (v.length > maxLength) throw new GatewayError('INVALID_FIELD', `${field} must be at most ${maxLength} characters`);
  return v;
}

export function optionalString(body: Record<string, unknown>, field: string, maxLength: number): string | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new GatewayError('INVALID_FIELD', `${field} must be a string`);
  if (v.length > maxLength) throw new GatewayError('INVALID_FIELD', `${field} must be at most ${maxLength} characters`);
  return v;
}

export function optionalBoolean(body: Record<string, unknown>, field: string): boolean | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new GatewayError('INVALID_FIELD', `${field} must be true or false`);
  return v;
}

export function optionalCount(body: Record<string, unknown>, field: string): number | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
    throw new GatewayError('INVALID_FIELD', `${field} must be a whole number >= 0`);
  }
  return v;
}

/** A required E.164 phone: MISSING_FIELD when absent, INVALID_PHONE when malformed. */
export function requiredPhone(value: unknown, field = 'phone'): string {
  if (value === undefined || value === null || value === '') throw new GatewayError('MISSING_FIELD', `${field} is required`);
  if (!isE164(value)) {
    throw new GatewayError('INVALID_PHONE', `${field} must be E.164: "+" then 7 to 15 digits, the first not 0`);
  }
  return value;
}

/** Max characters of a text message (WhatsApp's own limit is 65,536). */
export const MAX_TEXT = 65_536;
