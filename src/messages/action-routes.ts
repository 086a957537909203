import type { ConnectionActions, MessageRef } from '../connection/types.js';
import type { MessageRepository } from '../storage/ports/messages.js';
import { GatewayError } from '../domain/errors.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { ActionBody, DeleteQuery, EditInput, PresenceInput, ReactInput, ReadBody, ReadInput } from '../schemas/send.js';

const ACTION_ERRORS = ['MISSING_FIELD', 'INVALID_FIELD', 'CONNECTION_NOT_READY', 'RATE_LIMITED'] as const;

/**
 * Reactions, edits, deletes, read marks and presence: free (no credit), same auth and connection
 * rules as sends; reactions, edits and deletes wait their turn in the anti-ban queue.
 */
export function actionRoutes(core: { sender: ConnectionActions; messages: MessageRepository }): RouteDef[] {
  /** What the store knows of a message: whether we sent it, and its author in a group. */
  const ref = async (instanceId: string, chatId: string, messageId: string, fallbackFromMe: boolean): Promise<MessageRef> => {
    const m = await core.messages.get(instanceId, messageId);
    if (m && m.chatId !== chatId) throw new GatewayError('INVALID_FIELD', `message ${messageId} is in another chat`);
    const fromMe = m?.fromMe ?? fallbackFromMe;
    return { chatId, messageId, fromMe, ...(!fromMe && chatId.endsWith('@g.us') && m?.sender ? { participant: m.sender } : {}) };
  };

  return [
    defineRoute({
      method: 'POST',
      path: '/api/:id/react',
      auth: 'instance',
      operationId: 'react',
      summary: 'React to a message with an emoji ("" removes the reaction); free',
      tags: ['messages'],
      body: ReactInput,
      example: { chatId: '15551234567@s.whatsapp.net', messageId: '3EB0C767F26D4C4A5B8A', emoji: '👍' },
      response: { description: 'Reacted.', schema: ActionBody },
      errors: ACTION_ERRORS,
      async handle({ instance, body }) {
        const target = await ref(instance.id, body.chatId, body.messageId, false);
        await core.sender.act(instance.id, (c) => c.react(target, body.emoji), { paced: true });
        await core.messages.reaction(instance.id, body.messageId, 'me', body.emoji);
        return { success: true, instanceId: instance.id, chatId: body.chatId, messageId: body.messageId };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/:id/messages/:messageId/edit',
      auth: 'instance',
      operationId: 'editMessage',
      summary: 'Change the text of a message the instance sent; free',
      tags: ['messages'],
      body: EditInput,
      example: { chatId: '15551234567@s.whatsapp.net', message: 'Corrected text' },
      response: { description: 'Edited.', schema: ActionBody },
      errors: ACTION_ERRORS,
      async handle({ instance, body, params }) {
        const target = await ref(instance.id, body.chatId, params.messageId!, true);
        if (!target.fromMe) throw new GatewayError('INVALID_FIELD', 'only messages this instance sent can be edited');
        await core.sender.act(instance.id, (c) => c.edit(target, body.message), { paced: true });
        await core.messages.edited(instance.id, target.messageId, body.message);
        return { success: true, instanceId: instance.id, chatId: body.chatId, messageId: target.messageId };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/:id/messages/:messageId',
      auth: 'instance',
      operationId: 'deleteMessage',
      summary: 'Delete a message for everyone; free',
      description: 'A message the instance sent, or (as a group admin) one someone else wrote in a group.',
      tags: ['messages'],
      query: DeleteQuery,
      response: { description: 'Deleted.', schema: ActionBody },
      errors: ACTION_ERRORS,
      async handle({ instance, query, params }) {
        const target = await ref(instance.id, query.chatId, params.messageId!, true);
        await core.sender.act(instance.id, (c) => c.remove(target), { paced: true });
        await core.messages.deleted(instance.id, target.messageId);
        return { success: true, instanceId: instance.id, chatId: query.chatId, messageId: target.messageId };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/:id/read',
      auth: 'instance',
      operationId: 'markRead',
      summary: 'Mark messages of a chat read (the sender sees blue ticks); free',
      description: 'Without `messageIds`: every unread received message of the chat the gateway kept.',
      tags: ['messages'],
      body: ReadInput,
      example: { chatId: '15551234567@s.whatsapp.net' },
      response: { description: 'Marked.', schema: ReadBody },
      errors: ACTION_ERRORS,
      async handle({ instance, body }) {
        let ids = body.messageIds;
        if (ids === undefined) {
          const page = await core.messages.chatMessages(instance.id, body.chatId, 200);
          ids = (page?.messages ?? []).filter((m) => !m.fromMe && m.status === 'delivered').map((m) => m.messageId);
        }
        const targets = await Promise.all(ids.map((id) => ref(instance.id, body.chatId, id, false)));
        await core.sender.act(instance.id, (c) => c.markRead(targets), { paced: false });
        await core.messages.markRead(instance.id, body.chatId);
        return { success: true, instanceId: instance.id, chatId: body.chatId, read: targets.length };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/:id/presence',
      auth: 'instance',
      operationId: 'presence',
      summary: 'Show "typing...", "recording audio...", or stop it, in a chat; or go online or offline; free',
      description: 'Each state reaches the contact as itself: `typing`, `recording` and `paused` in this chat; `available` and `unavailable` to everyone who follows the account\'s presence (WhatsApp sends those to all of them, so `chatId` only names the chat the call was about).',
      tags: ['messages'],
      body: PresenceInput,
      example: { chatId: '15551234567@s.whatsapp.net', state: 'typing' },
      response: { description: 'Shown.', schema: ActionBody },
      errors: ACTION_ERRORS,
      async handle({ instance, body }) {
        await core.sender.act(instance.id, (c) => c.presence(body.chatId, body.state), { paced: false });
        return { success: true, instanceId: instance.id, chatId: body.chatId };
      },
    }),
  ];
}
