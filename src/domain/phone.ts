/** E.164 as DESIGN.md fixes it: "+", then 7 to 15 digits, the first not 0. */
const E164 = /^\+[1-9][0-9]{6,14}$/;

export function isE164(value: unknown): value is string {
  return typeof value === 'string' && E164.test(value);
}

/** "+15551234567" -> "15551234567" */
export function phoneDigits(phone: string): string {
  return phone.slice(1);
}

/** `{phone}` of a phone chat (`<digits>@s.whatsapp.net`), else nothing: answers carry the phone wherever it is known. */
export function phoneOfChat(chatId: string): { phone?: string } {
  const digits = /^([1-9][0-9]{6,14})@s\.whatsapp\.net$/.exec(chatId)?.[1];
  return digits ? { phone: `+${digits}` } : {};
}
