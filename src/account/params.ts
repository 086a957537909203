import { GatewayError } from '../domain/errors.js';
import { isE164, phoneDigits, phoneOfChat } from '../domain/phone.js';
import { CHAT_ID_PATTERN } from '../schemas/common.js';

const CHAT_ID = new RegExp(CHAT_ID_PATTERN);

/** A chat id from the path (`{chatId}`): a phone JID, a LID or a group; 400 otherwise. */
export function chatParam(raw: string | undefined): string {
  const chatId = raw ?? '';
  if (!CHAT_ID.test(chatId)) throw new GatewayError('INVALID_FIELD', 'chatId: expected a chat id, <digits>@s.whatsapp.net, <digits>@lid or <id>@g.us');
  return chatId;
}

/** A person from the path: an E.164 number, a phone JID or a LID (not a group); 400 otherwise. */
export function personParam(raw: string | undefined, name = 'chatIdOrPhone'): string {
  const value: string = raw ?? '';
  if (/^\+/.test(value)) {
    if (!isE164(value)) throw new GatewayError('INVALID_PHONE', `${name}: not an E.164 number`);
    return `${phoneDigits(value)}@s.whatsapp.net`;
  }
  if (CHAT_ID.test(value) && !value.endsWith('@g.us')) return value;
  throw new GatewayError('INVALID_FIELD', `${name}: expected an E.164 number (+15551234567), <digits>@s.whatsapp.net or <digits>@lid`);
}

export { phoneOfChat };
