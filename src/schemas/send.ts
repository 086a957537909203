import Type from 'typebox';
import { CHAT_ID_PATTERN, ChatId, MessageId, Phone, Quota, closed } from './common.js';
import { PRESENCE_STATES } from './account-events.js';

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

/** The media of a JSON body (send-media, a status post): exactly one of `url` or `base64`. */
export const MediaSource = {
  url: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'JSON only: the gateway fetches the file (http/https; the webhook address rules apply, redirects to private addresses refused; at most media.maxBytes, within media.fetchTimeoutMs). 400 MEDIA_FETCH_FAILED names what went wrong.' })),
  base64: Type.Optional(Type.String({ minLength: 1, description: 'JSON only: the file itself, base64 (or a data: URL); at most media.maxBytes once decoded.' })),
  mimetype: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'What the file claims to be; the gateway types it by content and keeps a claim only for content it cannot recognise.' })),
  fileName: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The name a document shows.' })),
};

export const MediaAsSchema = Type.Enum(['auto', 'document', 'voice', 'sticker', 'video-note'], {
  description: '`auto` (default: as the content says), `document`, `voice` (a voice note: audio/ogg; codecs=opus, or any audio the gateway converts with ffmpeg), `sticker` (image/webp) or `video-note` (a round video).',
});

export const SendMediaFields = closed({
  ...Recipient,
  ...MediaSource,
  caption: Type.Optional(Type.String({ maxLength: 4096 })),
  replyTo: Type.Optional(MessageId),
  as: Type.Optional(MediaAsSchema),
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
  mediaType: Type.Enum(['image', 'video', 'audio', 'document', 'sticker']),
  as: Type.Optional(Type.Enum(['document', 'voice', 'sticker', 'video-note'], { description: 'How it was sent, when not as its type (auto).' })),
});

export const SendLocationInput = closed({
  ...Recipient,
  latitude: Type.Number({ minimum: -90, maximum: 90 }),
  longitude: Type.Number({ minimum: -180, maximum: 180 }),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  address: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
  replyTo: Type.Optional(MessageId),
});

export const SendContactInput = closed({
  ...Recipient,
  contacts: Type.Array(closed({ name: Type.String({ minLength: 1, maxLength: 256 }), phone: Phone }), { minItems: 1, maxItems: 10 }),
  replyTo: Type.Optional(MessageId),
});

export const SendPollInput = closed({
  ...Recipient,
  question: Type.String({ minLength: 1, maxLength: 255 }),
  options: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 2, maxItems: 12, uniqueItems: true }),
  multiple: Type.Optional(Type.Boolean({ description: 'People may pick more than one option (default false).' })),
  replyTo: Type.Optional(MessageId),
});

export const ReactInput = closed({ chatId: ChatId, messageId: MessageId, emoji: Type.String({ maxLength: 16, description: 'One emoji; "" removes the reaction.' }) });
export const EditInput = closed({ chatId: ChatId, message: Type.String({ minLength: 1, maxLength: MAX_TEXT }) });
export const DeleteQuery = closed({ chatId: ChatId });
export const ReadInput = closed({ chatId: ChatId, messageIds: Type.Optional(Type.Array(MessageId, { minItems: 1, maxItems: 100, uniqueItems: true })) });
export const PresenceInput = closed({
  chatId: ChatId,
  state: Type.Enum([...PRESENCE_STATES], { description: '`typing`, `recording` (a voice note) or `paused` in this chat; `available` / `unavailable` to everyone who follows the account\'s presence.' }),
});

export const ActionBody = closed({ success: Type.Literal(true), instanceId: Type.String(), chatId: ChatId, messageId: Type.Optional(MessageId) });
export const ReadBody = closed({ success: Type.Literal(true), instanceId: Type.String(), chatId: ChatId, read: Type.Integer({ minimum: 0, description: 'Messages marked read.' }) });

export const CheckInput = closed({ phones: Type.Array(Phone, { minItems: 1, maxItems: 50, uniqueItems: true }) });
export const CheckBody = closed({
  success: Type.Literal(true),
  instanceId: Type.String(),
  results: Type.Array(closed({ phone: Phone, exists: Type.Boolean(), chatId: Type.Union([ChatId, Type.Null()]) })),
});

export const GroupsBody = closed({
  success: Type.Literal(true),
  instanceId: Type.String(),
  groups: Type.Array(closed({ chatId: ChatId, subject: Type.String(), size: Type.Integer({ minimum: 0 }) })),
});

export const GroupBody = closed({
  success: Type.Literal(true),
  instanceId: Type.String(),
  chatId: ChatId,
  subject: Type.String(),
  description: Type.Optional(Type.String()),
  participants: Type.Array(closed({ jid: Type.String(), phone: Type.Optional(Phone), admin: Type.Boolean() })),
  announce: Type.Optional(Type.Boolean({ description: 'Only admins may write.' })),
  locked: Type.Optional(Type.Boolean({ description: 'Only admins may change the group info.' })),
});
