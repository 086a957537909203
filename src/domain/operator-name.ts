/** An operator's name: 1 to 64 of letters, digits, ".", "_", "-" and "@", starting with a letter or digit. */
export const OPERATOR_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$';
const NAME = new RegExp(OPERATOR_NAME_PATTERN);

export function isOperatorName(value: string): boolean {
  return NAME.test(value);
}
