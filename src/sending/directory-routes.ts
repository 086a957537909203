import type { ConnectionActions } from '../connection/types.js';
import { GatewayError } from '../domain/errors.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { CHAT_ID_PATTERN } from '../schemas/common.js';
import { CheckBody, CheckInput, GroupBody, GroupsBody } from '../schemas/send.js';
import { checkNumbers, listGroups } from './directory.js';

/** Asking WhatsApp: which numbers exist, which groups the account is in. Free. */
export function directoryRoutes(core: { sender: ConnectionActions }): RouteDef[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/:id/contacts/check',
      auth: 'instance',
      operationId: 'checkContacts',
      summary: 'Which of 1 to 50 numbers have WhatsApp, and the chat to write to',
      tags: ['chats'],
      body: CheckInput,
      example: { phones: ['+15551234567', '+15557654321'] },
      response: { description: 'One result per number, in order.', schema: CheckBody },
      errors: ['MISSING_FIELD', 'INVALID_FIELD', 'INVALID_PHONE', 'CONNECTION_NOT_READY'],
      handle: ({ instance, body }) => checkNumbers(core.sender, instance.id, body.phones),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/:id/groups',
      auth: 'instance',
      operationId: 'listGroups',
      summary: 'The groups the account is in',
      tags: ['chats'],
      response: { description: 'Groups.', schema: GroupsBody },
      errors: ['CONNECTION_NOT_READY'],
      handle: ({ instance }) => listGroups(core.sender, instance.id),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/:id/groups/:chatId',
      auth: 'instance',
      operationId: 'getGroup',
      summary: "A group's subject, description and participants",
      tags: ['chats'],
      response: { description: 'The group.', schema: GroupBody },
      errors: ['NOT_FOUND', 'INVALID_FIELD', 'CONNECTION_NOT_READY'],
      async handle({ instance, params }) {
        const chatId = params.chatId!;
        if (!new RegExp(CHAT_ID_PATTERN).test(chatId) || !chatId.endsWith('@g.us')) throw new GatewayError('INVALID_FIELD', 'chatId: expected a group id, <id>@g.us');
        const group = await core.sender.act(instance.id, (c) => c.group(chatId), { paced: false });
        if (!group) throw new GatewayError('NOT_FOUND', 'no such group (or the account is not in it)');
        return { success: true, instanceId: instance.id, ...group };
      },
    }),
  ];
}
