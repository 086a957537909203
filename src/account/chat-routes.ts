import type { ChatChange } from '../connection/contacts-types.js';
import type { ConnectionActions } from '../connection/types.js';
import type { MessageRepository } from '../storage/ports/messages.js';
import { GatewayError } from '../domain/errors.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { ArchiveInput, ChatSettingBody, LabelChatBody, LabelChatInput, LabelsBody, MuteInput, PinInput } from '../schemas/account.js';
import { chatParam, phoneOfChat } from './params.js';

const CHAT = '15551234567@s.whatsapp.net';
const ERRORS = ['MISSING_FIELD', 'INVALID_FIELD', 'CONNECTION_NOT_READY', 'RATE_LIMITED'] as const;
const INSTANCE = 'inst_k3J9xQ2mVb7n';

/**
 * Chat settings of this account (archive, pin, mute, unread, delete; other people see nothing of
 * them) and labels (WhatsApp Business). Free; they change the account's app state, which
 * WhatsApp syncs to the phone and every linked device.
 */
export function chatRoutes(core: { sender: ConnectionActions; messages: Pick<MessageRepository, 'removeChat'> }): RouteDef[] {
  const change = (instanceId: string, chatId: string, c: ChatChange) => core.sender.act(instanceId, (conn) => conn.modifyChat(chatId, c), { paced: false });
  const answer = (instanceId: string, chatId: string, extra: Record<string, unknown>) => ({ success: true as const, instanceId, chatId, ...phoneOfChat(chatId), ...extra });
  return [
    defineRoute({
      method: 'POST',
      path: '/api/:id/chats/:chatId/archive',
      auth: 'instance',
      operationId: 'archiveChat',
      summary: 'Archive (`{"archived": true}`) or unarchive a chat',
      tags: ['chats'],
      body: ArchiveInput,
      example: { archived: true },
      response: { description: 'Done.', schema: ChatSettingBody, example: { success: true, instanceId: INSTANCE, chatId: CHAT, phone: '+15551234567', archived: true } },
      errors: ERRORS,
      async handle({ instance, params, body }) {
        const chatId = chatParam(params.chatId);
        await change(instance.id, chatId, { kind: 'archive', archived: body.archived });
        return answer(instance.id, chatId, { archived: body.archived });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/:id/chats/:chatId/pin',
      auth: 'instance',
      operationId: 'pinChat',
      summary: 'Pin (`{"pinned": true}`) or unpin a chat (WhatsApp pins 3 at most)',
      tags: ['chats'],
      body: PinInput,
      example: { pinned: true },
      response: { description: 'Done.', schema: ChatSettingBody, example: { success: true, instanceId: INSTANCE, chatId: CHAT, phone: '+15551234567', pinned: true } },
      errors: ERRORS,
      async handle({ instance, params, body }) {
        const chatId = chatParam(params.chatId);
        await change(instance.id, chatId, { kind: 'pin', pinned: body.pinned });
        return answer(instance.id, chatId, { pinned: body.pinned });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/:id/chats/:chatId/mute',
      auth: 'instance',
      operationId: 'muteChat',
      summary: 'Mute a chat until a time (`{"until": ISO}`), or unmute it (`{"until": null}`)',
      tags: ['chats'],
      body: MuteInput,
      example: { until: '2026-12-31T23:59:59.000Z' },
      response: { description: 'Done.', schema: ChatSettingBody, example: { success: true, instanceId: INSTANCE, chatId: CHAT, phone: '+15551234567', mutedUntil: '2026-12-31T23:59:59.000Z' } },
      errors: ERRORS,
      async handle({ instance, params, body }) {
        const chatId = chatParam(params.chatId);
        let until: number | null = null;
        if (body.until !== null) {
          until = Date.parse(body.until);
          if (Number.isNaN(until)) throw new GatewayError('INVALID_FIELD', 'until: expected an ISO 8601 time or null');
        }
        await change(instance.id, chatId, { kind: 'mute', until });
        return answer(instance.id, chatId, { mutedUntil: until === null ? null : new Date(until).toISOString() });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/:id/chats/:chatId/unread',
      auth: 'instance',
      operationId: 'markChatUnread',
      summary: 'Mark a chat unread (POST /api/{id}/read marks it read)',
      tags: ['chats'],
      response: { description: 'Done.', schema: ChatSettingBody, example: { success: true, instanceId: INSTANCE, chatId: CHAT, phone: '+15551234567', unread: true } },
      errors: ['INVALID_FIELD', 'CONNECTION_NOT_READY'],
      async handle({ instance, params }) {
        const chatId = chatParam(params.chatId);
        await change(instance.id, chatId, { kind: 'unread' });
        return answer(instance.id, chatId, { unread: true });
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/:id/chats/:chatId',
      auth: 'instance',
      operationId: 'deleteChat',
      summary: "Delete a chat for this account (the phone and every linked device; the other side keeps theirs)",
      description: "WhatsApp's \"Delete chat\": the chat and its messages leave the account's phone and devices. The gateway's own history of the chat (GET /api/{id}/chats/{chatId}/messages) is removed too.",
      tags: ['chats'],
      response: { description: 'Deleted.', schema: ChatSettingBody, example: { success: true, instanceId: INSTANCE, chatId: CHAT, phone: '+15551234567', deleted: true, messagesRemoved: 12 } },
      errors: ['INVALID_FIELD', 'CONNECTION_NOT_READY', 'STORAGE_UNAVAILABLE'],
      async handle({ instance, params }) {
        const chatId = chatParam(params.chatId);
        await change(instance.id, chatId, { kind: 'delete' });
        const messagesRemoved = await core.messages.removeChat(instance.id, chatId);
        return answer(instance.id, chatId, { deleted: true, messagesRemoved });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/:id/labels',
      auth: 'instance',
      operationId: 'listLabels',
      summary: 'The labels of a WhatsApp Business account, with the chats each is on (409 NOT_BUSINESS on a personal account)',
      tags: ['labels'],
      response: {
        description: 'Labels.',
        schema: LabelsBody,
        example: { success: true, instanceId: INSTANCE, labels: [{ id: '1', name: 'New customer', color: 1, chats: [CHAT] }, { id: '2', name: 'Pending payment', color: 3, chats: [] }] },
      },
      errors: ['NOT_BUSINESS', 'CONNECTION_NOT_READY'],
      async handle({ instance }) {
        const labels = await core.sender.act(instance.id, (c) => c.labels(), { paced: false });
        return { success: true, instanceId: instance.id, labels };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/:id/chats/:chatId/labels',
      auth: 'instance',
      operationId: 'labelChat',
      summary: 'Put labels on a chat and take others off (WhatsApp Business; 409 NOT_BUSINESS on a personal account)',
      tags: ['labels'],
      body: LabelChatInput,
      example: { add: ['1'], remove: ['2'] },
      response: { description: 'Done; each change is also a `label.updated` event.', schema: LabelChatBody, example: { success: true, instanceId: INSTANCE, chatId: CHAT, phone: '+15551234567', added: ['1'], removed: ['2'] } },
      errors: [...ERRORS, 'NOT_FOUND', 'NOT_BUSINESS'],
      async handle({ instance, params, body }) {
        const chatId = chatParam(params.chatId);
        const add = body.add ?? [];
        const remove = body.remove ?? [];
        if (add.length === 0 && remove.length === 0) throw new GatewayError('MISSING_FIELD', 'add or remove is required');
        const both = add.find((id) => remove.includes(id));
        if (both !== undefined) throw new GatewayError('INVALID_FIELD', `label ${JSON.stringify(both)} is both added and removed`);
        await core.sender.act(instance.id, (c) => c.labelChat(chatId, { add, remove }), { paced: false });
        return answer(instance.id, chatId, { added: add, removed: remove });
      },
    }),
  ];
}
