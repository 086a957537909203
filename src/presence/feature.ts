import type { ConnectionActions } from '../connection/types.js';
import type { Feature } from '../features/feature.js';
import { phoneOfChat } from '../domain/phone.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { SubscribeBody, SubscribeInput } from '../schemas/calls.js';

/** What the presence feature is built from. */
export interface PresenceParts {
  sender: ConnectionActions;
}

function presenceRoutes(parts: PresenceParts): RouteDef[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/:id/presence/subscribe',
      auth: 'instance',
      operationId: 'subscribePresence',
      summary: "Follow a person's presence (online, last seen, typing): presence.updated events follow; free",
      description: 'WhatsApp answers with their presence now, then tells each change while the connection lasts (subscribe again after a reconnect).',
      tags: ['chats'],
      body: SubscribeInput,
      example: { chatId: '15551234567@s.whatsapp.net' },
      response: { description: 'Subscribed.', schema: SubscribeBody, example: { success: true, instanceId: 'inst_k3J9xQ2mVb7n', chatId: '15551234567@s.whatsapp.net', phone: '+15551234567' } },
      errors: ['MISSING_FIELD', 'INVALID_FIELD', 'CONNECTION_NOT_READY'],
      async handle({ instance, body }) {
        await parts.sender.act(instance.id, (c) => c.subscribePresence(body.chatId), { paced: false });
        // `phone` beside a phone chat, as every answer about a chat carries it.
        return { success: true, instanceId: instance.id, chatId: body.chatId, ...phoneOfChat(body.chatId) };
      },
    }),
  ];
}

/** Presence subscriptions (showing the account's own presence is POST /presence, in the messages feature). */
export function presenceFeature(parts: PresenceParts): Feature {
  return { name: 'presence', routes: presenceRoutes(parts) };
}
