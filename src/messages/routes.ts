import { GatewayError } from '../domain/errors.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { ChatMessagesBody, ChatMessagesQuery, ChatsBody, MessageBody } from '../schemas/message.js';
import { messageReads, type MessageReadParts } from './reads.js';

export type { MessageReadParts };

/** Reading: one message (its status), its media, the chats and their history. */
export function messageRoutes(core: MessageReadParts, openHandovers: (instanceId: string) => Promise<ReadonlySet<string>>): RouteDef[] {
  const reads = messageReads(core, openHandovers);
  return [
    defineRoute({
      method: 'GET',
      path: '/api/:id/messages/:messageId',
      auth: 'instance',
      operationId: 'getMessage',
      summary: 'One message, in or out, with its status (pending, sent, delivered, read, played or failed)',
      description: 'Kept history.days (30). The status of an outgoing message never goes backwards; a received one is delivered, or read once the chat was marked read.',
      tags: ['messages'],
      response: { description: 'The message.', schema: MessageBody },
      errors: ['NOT_FOUND'],
      handle: ({ instance, params }) => reads.message(instance.id, params.messageId!),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/:id/messages/:messageId/media',
      auth: 'instance',
      operationId: 'getMessageMedia',
      summary: 'The bytes of a media message, in or out, with its content-type',
      description: 'Kept media.keepDays (7) within media.maxStoreBytes per instance; 404 once expired or for a message without media.',
      tags: ['messages'],
      response: { description: 'The file.', contentType: 'application/octet-stream' },
      errors: ['NOT_FOUND'],
      async handle({ koa, instance, params }) {
        const id = params.messageId!;
        const m = await core.messages.get(instance.id, id);
        const kept = m?.media ? await core.media.get(instance.id, id, core.clock.now()) : null;
        if (!m?.media || !kept) throw new GatewayError('NOT_FOUND', 'no media for this message (not a media message, or expired)');
        koa.type = m.media.mimetype;
        koa.length = kept.size;
        koa.set('Cache-Control', 'private, max-age=3600');
        koa.set('X-Content-Type-Options', 'nosniff');
        koa.set('Content-Disposition', `attachment; filename="${(m.media.fileName ?? id).replace(/[^\w.-]+/g, '_')}"`);
        koa.body = kept.stream();
        return undefined;
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/:id/chats',
      auth: 'instance',
      operationId: 'listChats',
      summary: 'Chats, newest first, with unread counts and whether a person took over',
      tags: ['chats'],
      response: { description: 'The chats.', schema: ChatsBody },
      errors: ['NOT_FOUND'],
      handle: ({ instance }) => reads.chats(instance.id),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/:id/chats/:chatId/messages',
      auth: 'instance',
      operationId: 'listChatMessages',
      summary: "A chat's messages, in and out, newest first",
      description: 'At most history.maxMessagesPerChat (200) are kept per chat. Page with `before`.',
      tags: ['chats'],
      query: ChatMessagesQuery,
      response: { description: 'A page of messages.', schema: ChatMessagesBody },
      errors: ['NOT_FOUND', 'INVALID_FIELD'],
      handle: ({ instance, params, query }) => reads.chatMessages(instance.id, params.chatId!, query),
    }),
  ];
}
