import Type, { type Static } from 'typebox';
import { ChatId, IsoTime, MessageId, Phone, closed } from './common.js';
import { EVENT_TYPES, INSTANCE_STATUSES, MESSAGE_STATUSES, MESSAGE_TYPES } from '../domain/vocabulary.js';
import { CallReceivedData, GroupJoinedData, GroupParticipantsData, GroupUpdatedData, PollVoteData, PresenceUpdatedData } from './account-events.js';

export { EVENT_TYPES, INSTANCE_STATUSES, MESSAGE_STATUSES, MESSAGE_TYPES };

export type EventType = (typeof EVENT_TYPES)[number];

export const InstanceStatusSchema = Type.Enum([...INSTANCE_STATUSES], { description: 'The instance status.' });

export const MessageTypeSchema = Type.Enum([...MESSAGE_TYPES], { description: 'What kind of message it is.' });

export const MessageStatusSchema = Type.Enum([...MESSAGE_STATUSES], { description: 'Where an outgoing message stands; never goes backwards.' });

export const Location = closed({
  latitude: Type.Number({ minimum: -90, maximum: 90 }),
  longitude: Type.Number({ minimum: -180, maximum: 180 }),
  name: Type.Optional(Type.String({ maxLength: 1000 })),
  address: Type.Optional(Type.String({ maxLength: 1000 })),
});

export const ContactCard = closed({
  name: Type.String({ maxLength: 256 }),
  phone: Type.Union([Phone, Type.Null()], { description: 'The first phone number of the card, when it has one.' }),
  vcard: Type.String({ maxLength: 10_000, description: 'The vCard as sent.' }),
});

export const MediaInfo = closed({
  mimetype: Type.String(),
  size: Type.Integer({ minimum: 0, description: 'Bytes.' }),
  fileName: Type.Optional(Type.String()),
  url: Type.Union([Type.String(), Type.Null()], { description: 'GET it with the instance key: /api/{id}/messages/{messageId}/media (null when it could not be downloaded).' }),
  kind: Type.Optional(Type.Enum(['image', 'video', 'audio', 'document', 'voice', 'sticker', 'video-note'], { description: 'What the media is: `voice` (a voice note), `sticker`, `video-note` (a round video), or its plain type.' })),
});

export const PollInfo = closed({
  question: Type.String(),
  options: Type.Array(Type.String()),
  multiple: Type.Boolean(),
});

export const InboundMessageSchema = closed(
  {
    messageId: MessageId,
    chatId: ChatId,
    isGroup: Type.Boolean(),
    sender: Type.String({ description: "The sender's JID, LID or phone." }),
    from: Type.Union([Phone, Type.Null()], { description: "The sender's phone, or null when WhatsApp gave only a LID the gateway cannot map yet." }),
    fromName: Type.Optional(Type.String()),
    type: MessageTypeSchema,
    text: Type.Optional(Type.String()),
    caption: Type.Optional(Type.String()),
    timestamp: IsoTime,
    quoted: Type.Optional(closed({ messageId: MessageId })),
    mentions: Type.Optional(Type.Array(Type.String())),
    media: Type.Optional(MediaInfo),
    location: Type.Optional(Location),
    contacts: Type.Optional(Type.Array(ContactCard)),
    poll: Type.Optional(PollInfo),
    fromMe: Type.Optional(Type.Boolean({ description: 'true in `message.sent`: the account wrote it (from the phone or another linked device); absent in `message.received`.' })),
  },
  { description: 'A message someone sent to the instance (message.received), or the account sent from elsewhere (message.sent, with fromMe true).' },
);
export type InboundMessage = Static<typeof InboundMessageSchema>;

export const MessageStatusData = closed({
  messageId: MessageId,
  chatId: ChatId,
  phone: Type.Optional(Phone),
  status: MessageStatusSchema,
  timestamp: IsoTime,
  error: Type.Optional(Type.String()),
});

export const ReactionData = closed({
  messageId: MessageId,
  chatId: ChatId,
  sender: Type.String(),
  from: Type.Union([Phone, Type.Null()]),
  emoji: Type.String({ description: 'The emoji; "" when the reaction was removed.' }),
  timestamp: IsoTime,
});

export const EditedData = closed({
  messageId: MessageId,
  chatId: ChatId,
  sender: Type.String(),
  from: Type.Union([Phone, Type.Null()]),
  text: Type.String(),
  timestamp: IsoTime,
});

export const DeletedData = closed({
  messageId: MessageId,
  chatId: ChatId,
  sender: Type.String(),
  from: Type.Union([Phone, Type.Null()]),
  timestamp: IsoTime,
});

export const InstanceStatusData = closed({
  from: InstanceStatusSchema,
  to: InstanceStatusSchema,
  reason: Type.Union([Type.String(), Type.Null()]),
});

export const QrUpdatedData = closed({ qr: Type.String({ description: 'The raw QR payload.' }) });

export const HandoverData = closed({
  chatId: ChatId,
  phone: Phone,
  flow: Type.String(),
  node: Type.String(),
  reason: Type.String(),
  fromName: Type.Optional(Type.String()),
  text: Type.Optional(Type.String()),
  expiresAt: Type.Optional(IsoTime),
});

export const LabelUpdatedData = closed({
  labelId: Type.String(),
  action: Type.Enum(['edited', 'deleted', 'chat-added', 'chat-removed'], { description: '`edited` (created, renamed or recoloured), `deleted`, or put on (`chat-added`) or taken off (`chat-removed`) a chat.' }),
  name: Type.Optional(Type.String()),
  color: Type.Optional(Type.Integer({ minimum: 0 })),
  chatId: Type.Optional(Type.String()),
  phone: Type.Optional(Phone),
});

export const WebhookTestData = closed({
  message: Type.String(),
  requestedAt: IsoTime,
});

/** The data schema of each event type. */
export const EVENT_DATA = {
  'message.received': InboundMessageSchema,
  'message.sent': InboundMessageSchema,
  'label.updated': LabelUpdatedData,
  'message.status': MessageStatusData,
  'message.reaction': ReactionData,
  'message.edited': EditedData,
  'message.deleted': DeletedData,
  'instance.status': InstanceStatusData,
  'qr.updated': QrUpdatedData,
  'conversation.handover': HandoverData,
  'webhook.test': WebhookTestData,
  'group.joined': GroupJoinedData,
  'group.updated': GroupUpdatedData,
  'group.participants': GroupParticipantsData,
  'call.received': CallReceivedData,
  'presence.updated': PresenceUpdatedData,
  'poll.vote': PollVoteData,
} as const;

/** The body of a webhook delivery (and of a live event), for one event type. */
export function eventEnvelope<T extends EventType>(type: T) {
  return closed(
    {
      type: Type.Literal(type),
      timestamp: IsoTime,
      instanceId: Type.String(),
      data: EVENT_DATA[type],
    },
    { title: type },
  );
}
