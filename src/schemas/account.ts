import Type from 'typebox';
import { ChatId, IsoTime, MessageId, Phone, Quota, closed } from './common.js';
import { MediaSource } from './send.js';

/** What every answer about one chat starts with; `phone` whenever the chat is a known number. */
const ChatRef = {
  success: Type.Literal(true),
  instanceId: Type.String(),
  chatId: ChatId,
  phone: Type.Optional(Phone),
};

export const ContactBody = closed({
  success: Type.Literal(true),
  instanceId: Type.String(),
  chatId: ChatId,
  phone: Type.Optional(Phone),
  lid: Type.Optional(Type.String({ pattern: '^[0-9]{5,25}@lid$', description: "The contact's LID, from Baileys' mapping or WhatsApp." })),
  name: Type.Optional(Type.String({ description: 'The address-book name, else the name the contact chose.' })),
  about: Type.Optional(Type.String()),
  pictureUrl: Type.Optional(Type.String()),
  exists: Type.Boolean({ description: 'Whether the number (or LID) has WhatsApp.' }),
});

export const BlockInput = closed({ blocked: Type.Boolean() });
export const BlockBody = closed({ ...ChatRef, blocked: Type.Boolean() });
export const BlocklistBody = closed({
  success: Type.Literal(true),
  instanceId: Type.String(),
  blocked: Type.Array(closed({ chatId: ChatId, phone: Type.Optional(Phone) })),
});

export const ProfileBody = closed({
  success: Type.Literal(true),
  instanceId: Type.String(),
  jid: Type.String({ description: "The account's phone JID." }),
  phone: Phone,
  name: Type.String({ description: 'The push name contacts see.' }),
  about: Type.String(),
  pictureUrl: Type.Optional(Type.String()),
  business: Type.Boolean({ description: 'A WhatsApp Business account (labels work only there).' }),
});

export const ProfileInput = closed({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 25, description: 'The push name (WhatsApp allows 25 characters).' })),
  about: Type.Optional(Type.String({ maxLength: 139, description: 'The about text (WhatsApp allows 139 characters; "" clears it).' })),
});

export const PictureBody = closed({ success: Type.Literal(true), instanceId: Type.String(), picture: Type.Boolean({ description: 'Whether the account has a picture now.' }) });

export const ArchiveInput = closed({ archived: Type.Boolean() });
export const PinInput = closed({ pinned: Type.Boolean() });
export const MuteInput = closed({ until: Type.Union([IsoTime, Type.Null()], { description: 'Muted until this time; null unmutes.' }) });

export const ChatSettingBody = closed({
  ...ChatRef,
  archived: Type.Optional(Type.Boolean()),
  pinned: Type.Optional(Type.Boolean()),
  mutedUntil: Type.Optional(Type.Union([IsoTime, Type.Null()])),
  unread: Type.Optional(Type.Boolean()),
  deleted: Type.Optional(Type.Boolean()),
  messagesRemoved: Type.Optional(Type.Integer({ minimum: 0, description: "Messages of the chat removed from the gateway's history." })),
});

const LabelId = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'A label id (GET /api/{id}/labels).' });

export const LabelsBody = closed({
  success: Type.Literal(true),
  instanceId: Type.String(),
  labels: Type.Array(closed({ id: LabelId, name: Type.String(), color: Type.Integer({ minimum: 0 }), chats: Type.Array(Type.String()) })),
});

export const LabelChatInput = closed({
  add: Type.Optional(Type.Array(LabelId, { minItems: 1, maxItems: 20, uniqueItems: true })),
  remove: Type.Optional(Type.Array(LabelId, { minItems: 1, maxItems: 20, uniqueItems: true })),
});

export const LabelChatBody = closed({ ...ChatRef, added: Type.Array(LabelId), removed: Type.Array(LabelId) });

/** An audience member: an E.164 number or a phone JID. */
const AudienceMember = Type.String({ pattern: '^(\\+[1-9][0-9]{6,14}|[1-9][0-9]{4,19}@s\\.whatsapp\\.net)$', description: 'An E.164 number or a phone JID.' });

/** A status post: a text (with a background and a font), or media as send-media takes it. */
export const StatusFields = closed({
  text: Type.Optional(Type.String({ minLength: 1, maxLength: 700, description: 'A text status (WhatsApp allows 700 characters).' })),
  backgroundColor: Type.Optional(Type.String({ pattern: '^#[0-9A-Fa-f]{6}$', description: "A text status's background, #RRGGBB." })),
  font: Type.Optional(Type.Integer({ minimum: 0, maximum: 9, description: "A text status's font (WhatsApp's index, 0 to 9)." })),
  ...MediaSource,
  caption: Type.Optional(Type.String({ maxLength: 4096 })),
  audience: Type.Optional(Type.Array(AudienceMember, { minItems: 1, maxItems: 1024, uniqueItems: true, description: 'Who sees it; default: the contacts in the address book.' })),
});

export const StatusBody = closed({
  success: Type.Literal(true),
  instanceId: Type.String(),
  messageId: MessageId,
  type: Type.Enum(['text', 'image', 'video', 'audio']),
  audience: Type.Union([Type.Integer({ minimum: 0 }), Type.Literal('contacts')], { description: 'How many people were named, or "contacts" (the address book).' }),
  quotaRemaining: Quota,
});
