import Type from 'typebox';

/** E.164 as DESIGN.md fixes it: "+", then 7 to 15 digits, the first not 0. */
export const E164_PATTERN = '^\\+[1-9][0-9]{6,14}$';
/** A WhatsApp chat: a phone JID, a LID or a group. */
export const CHAT_ID_PATTERN = '^([1-9][0-9]{4,19}@s\\.whatsapp\\.net|[0-9]{5,25}@lid|[0-9]{5,25}(-[0-9]{5,15})?@g\\.us)$';
export const INSTANCE_ID_PATTERN = '^inst_[A-Za-z0-9_-]{6,40}$';
export const MESSAGE_ID_PATTERN = '^[A-Za-z0-9_-]{1,128}$';

export const Phone = Type.String({ pattern: E164_PATTERN, description: 'E.164: "+" then 7 to 15 digits, the first not 0.', examples: ['+15551234567'] });
export const ChatId = Type.String({
  pattern: CHAT_ID_PATTERN,
  description: 'A chat id: `<digits>@s.whatsapp.net` (a phone), `<digits>@lid` (a LID) or `<id>@g.us` (a group).',
  examples: ['15551234567@s.whatsapp.net'],
});
export const InstanceId = Type.String({ pattern: INSTANCE_ID_PATTERN, description: 'The instance id.', examples: ['inst_k3J9xQ2mVb7n'] });
export const MessageId = Type.String({ pattern: MESSAGE_ID_PATTERN, description: 'A WhatsApp message id.', examples: ['3EB0C767F26D4C4A5B8A'] });
export const IsoTime = Type.String({ format: 'date-time', description: 'ISO 8601 time.', examples: ['2026-01-01T12:00:00.000Z'] });
export const Success = Type.Literal(true);

/** quotaRemaining: the credit balance as a decimal string, or "unlimited" while premium. */
export const Quota = Type.String({ pattern: '^(unlimited|[0-9]+)$', description: 'Credits left as a decimal string, or "unlimited" while premium.', examples: ['41', 'unlimited'] });

export const ErrorBody = Type.Object(
  {
    success: Type.Literal(false),
    error: Type.Object(
      { code: Type.String(), message: Type.String(), node: Type.Optional(Type.String({ description: 'The flow node at fault (flow validation errors).' })) },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, description: 'Every error answer.' },
);

/** Closed object: unknown fields are refused (DESIGN.md: unknown body fields are 400 on every route). */
export function closed<P extends Record<string, import('typebox').TSchema>>(properties: P, options: { description?: string; title?: string } = {}) {
  return Type.Object(properties, { additionalProperties: false, ...options });
}
