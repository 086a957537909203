import Type from 'typebox';
import { CHAT_ID_PATTERN, ChatId, MessageId, Phone, Quota, closed } from './common.js';

/** Where a message goes: exactly one of `phone` or `to` (checked by the route). */
export const Recipient = {
  phone: Type.Optional(Phone),
  to: Type.Optional(ChatId),
};

export const MAX_TEXT = 65_536;

export const Mention = Type.String({
  pattern: `^(\\+[1-9][0-9]{6,14}|${CHAT_ID_PATTERN.slice(1, -1)})$`,
  description: 'An E.164 number or a JID.',
});

export const SendTextInput = closed({
  ...Recipient,
  message: Type.String({ minLength: 1, maxLength: MAX_TEXT }),
  replyTo: Type.Optional(MessageId),
  mentions: Type.Optional(Type.Array(Mention, { maxItems: 256, uniqueItems: true })),
});

export const SendMediaFields = closed({
  ...Recipient,
  caption: Type.Optional(Type.String({ maxLength: 4096 })),
  replyTo: Type.Optional(MessageId),
});

export const SendBody = closed({
  success: Type.Literal(true),
  instanceId: Type.String(),
  messageId: MessageId,
  to: ChatId,
  quotaRemaining: Quota,
});

export const SendMediaBody = closed({
  ...SendBody.properties,
  mediaType: Type.Enum(['image', 'video', 'audio', 'document']),
});
