import { GatewayError } from '../domain/errors.js';
import { isE164, phoneDigits } from '../domain/phone.js';

/** A phone's chat id: "+15551234567" -> "15551234567@s.whatsapp.net". */
export function phoneJid(phone: string): string {
  return `${phoneDigits(phone)}@s.whatsapp.net`;
}

/** The chat a send goes to: exactly one of `phone` (E.164) or `to` (a chat id, checked by the schema). */
export function recipient(body: { phone?: string | undefined; to?: string | undefined }): string {
  if (body.phone !== undefined && body.to !== undefined) throw new GatewayError('INVALID_FIELD', 'give either phone or to, not both');
  if (body.to !== undefined) return body.to;
  if (body.phone !== undefined) return phoneJid(body.phone);
  throw new GatewayError('MISSING_FIELD', 'phone or to is required');
}

/** Mentions as JIDs: E.164 numbers become phone JIDs; JIDs pass as they are. */
export function mentionJids(mentions: readonly string[] | undefined): string[] | undefined {
  if (!mentions || mentions.length === 0) return undefined;
  return [...new Set(mentions.map((m) => (isE164(m) ? phoneJid(m) : m)))];
}
