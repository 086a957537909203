import type { ConnectionActions } from '../connection/types.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { BlockBody, BlockInput, BlocklistBody, ContactBody } from '../schemas/account.js';
import { personParam, phoneOfChat } from './params.js';

const EXAMPLE_CHAT = '15551234567@s.whatsapp.net';

/** Contacts: one contact (with the LID <-> phone lookup), blocking, the block list. Free. */
export function contactRoutes(core: { sender: ConnectionActions }): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/:id/contacts/:chatIdOrPhone',
      auth: 'instance',
      operationId: 'getContact',
      summary: 'One contact: its chat, phone and LID (looked up both ways), name, about text, picture, and whether it has WhatsApp',
      description:
        '`chatIdOrPhone`: an E.164 number (`+15551234567`, URL-encoded `%2B15551234567` also works), a phone JID or a LID. The LID of a number comes from the mapping Baileys keeps, else from WhatsApp (usync); the number of a LID only from the mapping (WhatsApp does not reveal it), so `phone` is absent when it is unknown. `about` and `pictureUrl` are absent when the contact\'s privacy settings hide them.',
      tags: ['contacts'],
      response: {
        description: 'The contact.',
        schema: ContactBody,
        example: { success: true, instanceId: 'inst_k3J9xQ2mVb7n', chatId: EXAMPLE_CHAT, phone: '+15551234567', lid: '200000015551234@lid', name: 'Ann Silva', about: 'Available', pictureUrl: 'https://pps.whatsapp.net/v/t61.24694-24/abc.jpg', exists: true },
      },
      errors: ['INVALID_FIELD', 'INVALID_PHONE', 'CONNECTION_NOT_READY'],
      async handle({ instance, params }) {
        const chatId = personParam(params.chatIdOrPhone);
        const contact = await core.sender.act(instance.id, (c) => c.contactInfo(chatId), { paced: false });
        return { success: true, instanceId: instance.id, ...contact };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/:id/contacts/:chatId/block',
      auth: 'instance',
      operationId: 'blockContact',
      summary: 'Block (`{"blocked": true}`) or unblock a contact',
      tags: ['contacts'],
      body: BlockInput,
      example: { blocked: true },
      response: { description: 'Done.', schema: BlockBody, example: { success: true, instanceId: 'inst_k3J9xQ2mVb7n', chatId: EXAMPLE_CHAT, phone: '+15551234567', blocked: true } },
      errors: ['MISSING_FIELD', 'INVALID_FIELD', 'INVALID_PHONE', 'CONNECTION_NOT_READY', 'RATE_LIMITED'],
      async handle({ instance, params, body }) {
        const chatId = personParam(params.chatId, 'chatId');
        // Paced: mass blocking is what WhatsApp's spam systems watch for.
        await core.sender.act(instance.id, (c) => c.setBlocked(chatId, body.blocked), { paced: true });
        return { success: true, instanceId: instance.id, chatId, ...phoneOfChat(chatId), blocked: body.blocked };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/:id/blocklist',
      auth: 'instance',
      operationId: 'getBlocklist',
      summary: 'The contacts the account blocked',
      tags: ['contacts'],
      response: { description: 'Blocked contacts.', schema: BlocklistBody, example: { success: true, instanceId: 'inst_k3J9xQ2mVb7n', blocked: [{ chatId: EXAMPLE_CHAT, phone: '+15551234567' }] } },
      errors: ['CONNECTION_NOT_READY'],
      async handle({ instance }) {
        const blocked = await core.sender.act(instance.id, (c) => c.blocklist(), { paced: false });
        return { success: true, instanceId: instance.id, blocked };
      },
    }),
  ];
}
