/** E.164 as DESIGN.md fixes it: "+", then 7 to 15 digits, the first not 0. */
const E164 = /^\+[1-9][0-9]{6,14}$/;

export function isE164(value: unknown): value is string {
  return typeof value === 'string' && E164.test(value);
}

/** "+15551234567" -> "15551234567" */
export function phoneDigits(phone: string): string {
  return phone.slice(1);
}
