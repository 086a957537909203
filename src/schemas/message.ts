import Type, { type Static } from 'typebox';
import { ChatId, IsoTime, MessageId, Phone, closed } from './common.js';
import { ContactCard, Location, MediaInfo, MessageStatusSchema, MessageTypeSchema, PollInfo } from './events.js';
import { PollVotes } from './account-events.js';

/**
 * One message as the gateway keeps it (history and lifecycle), in or out. For an outgoing message
 * `status` is where it stands (never backwards); for a received one it is `delivered`, or `read`
 * once the instance marked the chat read.
 */
export const MessageView = closed({
  messageId: MessageId,
  chatId: ChatId,
  phone: Type.Optional(Phone),
  fromMe: Type.Boolean(),
  sender: Type.Union([Type.String(), Type.Null()], { description: "The sender's JID or LID (null for our own messages)." }),
  from: Type.Union([Phone, Type.Null()]),
  fromName: Type.Optional(Type.String()),
  type: MessageTypeSchema,
  status: MessageStatusSchema,
  text: Type.Optional(Type.String()),
  caption: Type.Optional(Type.String()),
  quoted: Type.Optional(closed({ messageId: MessageId })),
  mentions: Type.Optional(Type.Array(Type.String())),
  media: Type.Optional(MediaInfo),
  location: Type.Optional(Location),
  contacts: Type.Optional(Type.Array(ContactCard)),
  poll: Type.Optional(PollInfo),
  votes: Type.Optional(PollVotes),
  edited: Type.Optional(Type.Boolean()),
  deleted: Type.Optional(Type.Boolean()),
  reactions: Type.Optional(Type.Array(closed({ sender: Type.String(), emoji: Type.String() }))),
  error: Type.Optional(Type.String()),
  timestamp: IsoTime,
  updatedAt: IsoTime,
});
export type MessageViewT = Static<typeof MessageView>;

export const MessageBody = Type.Object({ success: Type.Literal(true), instanceId: Type.String(), ...MessageView.properties }, { additionalProperties: false });

export const ChatSummary = closed({
  chatId: ChatId,
  phone: Type.Optional(Phone),
  name: Type.Optional(Type.String()),
  isGroup: Type.Boolean(),
  lastMessageAt: IsoTime,
  unread: Type.Integer({ minimum: 0 }),
  handover: Type.Boolean({ description: 'A chatbot flow handed this chat to a person (see /handovers).' }),
});

export const ChatsBody = closed({ success: Type.Literal(true), instanceId: Type.String(), chats: Type.Array(ChatSummary) });

export const ChatMessagesQuery = closed({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  before: Type.Optional(Type.String({ maxLength: 128, description: 'A messageId: only messages older than it (the next page).' })),
});

export const ChatMessagesBody = closed({
  success: Type.Literal(true),
  instanceId: Type.String(),
  chatId: ChatId,
  messages: Type.Array(MessageView),
  nextBefore: Type.Union([Type.String(), Type.Null()], { description: 'Pass as `before` for older messages (null at the end).' }),
});
