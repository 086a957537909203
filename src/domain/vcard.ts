import { phoneDigits } from './phone.js';

/** vCard text values escape backslash, comma, semicolon and newlines (RFC 6350 3.4). */
function escape(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/,/g, '\\,').replace(/;/g, '\\;').replace(/\r?\n/g, '\\n');
}

/**
 * A vCard 3.0 for one contact, as WhatsApp builds them: the `waid` parameter is what makes
 * "Message" and "Add" work on the phone.
 */
export function vcard(name: string, phone: string): string {
  return ['BEGIN:VCARD', 'VERSION:3.0', `FN:${escape(name)}`, `TEL;type=CELL;type=VOICE;waid=${phoneDigits(phone)}:${phone}`, 'END:VCARD'].join('\n');
}

/** The first phone of a vCard (the `waid`, else the first TEL value), as E.164, or null. */
export function vcardPhone(card: string): string | null {
  const waid = /waid=([0-9]{7,15})/i.exec(card)?.[1];
  if (waid) return `+${waid}`;
  const tel = /^TEL[^:]*:(.*)$/im.exec(card)?.[1];
  const digits = tel?.replace(/[^0-9]/g, '') ?? '';
  return /^[1-9][0-9]{6,14}$/.test(digits) ? `+${digits}` : null;
}

/** The display name of a vCard (FN), unescaped. */
export function vcardName(card: string): string | null {
  const fn = /^FN[^:]*:(.*)$/im.exec(card)?.[1];
  return fn === undefined ? null : fn.replace(/\\([,;\\])/g, '$1').replace(/\\n/g, '\n').trim();
}
