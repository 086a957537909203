import Type from 'typebox';
import { GatewayError } from '../domain/errors.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { ChatId, IsoTime, MessageId, closed } from '../schemas/common.js';
import { MessageTypeSchema } from '../schemas/events.js';
import type { MessageRepository } from '../storage/ports/messages.js';

const SearchQuery = closed({
  q: Type.String({ minLength: 1, maxLength: 200, description: 'Words to find: in a chat\'s name or number, or in a message\'s text, caption or sender\'s name (case-insensitive).' }),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 30 })),
});
const FoundChat = closed({ chatId: ChatId, name: Type.Optional(Type.String()), isGroup: Type.Boolean(), lastMessageAt: IsoTime, unread: Type.Integer({ minimum: 0 }) });
const FoundMessage = closed({
  messageId: MessageId,
  chatId: ChatId,
  fromMe: Type.Boolean(),
  fromName: Type.Optional(Type.String()),
  type: MessageTypeSchema,
  text: Type.Optional(Type.String()),
  caption: Type.Optional(Type.String()),
  timestamp: IsoTime,
});
const SearchBody = closed({
  success: Type.Literal(true),
  instanceId: Type.String(),
  chats: Type.Array(FoundChat, { description: 'Chats whose name or number matches, newest first.' }),
  messages: Type.Array(FoundMessage, { description: 'Messages that match, newest first (the newest 20,000 kept are searched).' }),
});

/** GET /api/{id}/search: the inbox's search by name, number and text. */
export function searchRoutes(messages: MessageRepository): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/:id/search',
      auth: 'instance',
      operationId: 'searchMessages',
      summary: 'Find chats by name or number, and messages by their text',
      tags: ['chats'],
      query: SearchQuery,
      response: {
        description: 'What matches, newest first.',
        schema: SearchBody,
        example: {
          success: true,
          instanceId: 'inst_k3J9xQ2mVb7n',
          chats: [{ chatId: '15551234567@s.whatsapp.net', name: 'Ann', isGroup: false, lastMessageAt: '2026-01-02T09:00:00.000Z', unread: 1 }],
          messages: [{ messageId: '3EB0C767F26D4C4A5B8A', chatId: '15551234567@s.whatsapp.net', fromMe: false, fromName: 'Ann', type: 'text', text: 'Where is my order?', timestamp: '2026-01-02T09:00:00.000Z' }],
        },
      },
      errors: ['NOT_FOUND', 'MISSING_FIELD'],
      async handle({ instance, query }) {
        if (!messages.historyEnabled) throw new GatewayError('NOT_FOUND', 'the conversation history is off (history.enabled is false in config.json)');
        const limit = query.limit ?? 30;
        const needle = query.q.trim().toLowerCase();
        const digits = needle.replace(/[\s()+-]/g, '');
        const iso = (ms: number) => new Date(ms).toISOString();
        const chats = (await messages.chats(instance.id))
          .filter((c) => (c.name?.toLowerCase().includes(needle) ?? false) || (/^\d+$/.test(digits) && c.chatId.split('@')[0]!.includes(digits)))
          .slice(0, limit)
          .map((c) => ({ chatId: c.chatId, ...(c.name !== undefined ? { name: c.name } : {}), isGroup: c.isGroup, lastMessageAt: iso(c.lastMessageAt), unread: c.unread }));
        const found = needle === '' ? [] : await messages.search(instance.id, needle, limit);
        return {
          success: true,
          instanceId: instance.id,
          chats,
          messages: found.map((m) => ({
            messageId: m.messageId,
            chatId: m.chatId,
            fromMe: m.fromMe,
            ...(m.fromName !== undefined ? { fromName: m.fromName } : {}),
            type: m.type,
            ...(m.text !== undefined ? { text: m.text } : {}),
            ...(m.caption !== undefined ? { caption: m.caption } : {}),
            timestamp: iso(m.timestamp),
          })),
        };
      },
    }),
  ];
}
