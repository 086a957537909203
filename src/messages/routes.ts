import type { Clock } from '../domain/clock.js';
import type { MediaRepository } from '../storage/ports/media.js';
import type { MessageRepository } from '../storage/ports/messages.js';

/** What reading messages needs. */
export interface MessageReadParts {
  clock: Clock;
  messages: MessageRepository;
  media: MediaRepository;
}
import { GatewayError } from '../domain/errors.js';
import { phoneOfChat } from '../domain/phone.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { CHAT_ID_PATTERN } from '../schemas/common.js';
import { ChatMessagesBody, ChatMessagesQuery, ChatsBody, MessageBody, type MessageViewT } from '../schemas/message.js';
import { mediaUrl } from './hub.js';
import type { StoredMessage } from '../storage/ports/messages.js';

const CHAT_ID = new RegExp(CHAT_ID_PATTERN);

/** A stored message as the API shows it. */
async function view(core: MessageReadParts, instanceId: string, m: StoredMessage): Promise<MessageViewT> {
  const iso = (ms: number) => new Date(ms).toISOString();
  const out: MessageViewT = {
    messageId: m.messageId,
    chatId: m.chatId,
    ...phoneOfChat(m.chatId),
    fromMe: m.fromMe,
    sender: m.sender,
    from: m.from,
    type: m.type,
    status: m.status,
    timestamp: iso(m.timestamp),
    updatedAt: iso(m.updatedAt),
  };
  if (m.fromName !== undefined) out.fromName = m.fromName;
  if (m.text !== undefined) out.text = m.text;
  if (m.caption !== undefined) out.caption = m.caption;
  if (m.quoted) out.quoted = m.quoted;
  if (m.mentions) out.mentions = m.mentions;
  if (m.location) out.location = m.location;
  if (m.contacts) out.contacts = m.contacts;
  if (m.poll) {
    out.poll = m.poll;
    out.votes = pollVotes(m);
  }
  if (m.edited) out.edited = true;
  if (m.deleted) out.deleted = true;
  if (m.reactions) out.reactions = Object.entries(m.reactions).map(([sender, emoji]) => ({ sender, emoji }));
  if (m.error !== undefined) out.error = m.error;
  if (m.media) {
    const kept = await core.media.get(instanceId, m.messageId, core.clock.now());
    out.media = { ...m.media, url: kept ? mediaUrl(instanceId, m.messageId) : null };
  }
  return out;
}

/** Each option of a poll with who picked it (their latest vote); the ones nobody picked too. */
function pollVotes(m: StoredMessage): Record<string, Array<{ jid: string; phone?: string }>> {
  // A Map, not an object: an option may be called "__proto__".
  const out = new Map<string, Array<{ jid: string; phone?: string }>>((m.poll?.options ?? []).map((o) => [o, []]));
  for (const [jid, vote] of Object.entries(m.votes ?? {})) {
    for (const option of vote.selected) out.get(option)?.push({ jid, ...(vote.phone !== undefined ? { phone: vote.phone } : {}) });
  }
  return Object.fromEntries(out);
}

function requireChatId(chatId: string): string {
  if (!CHAT_ID.test(chatId)) throw new GatewayError('INVALID_FIELD', 'chatId: expected <digits>@s.whatsapp.net, <digits>@lid or <id>@g.us');
  return chatId;
}

/** Reading: one message (its status), its media, the chats and their history. */
export function messageRoutes(core: MessageReadParts, openHandovers: (instanceId: string) => Promise<ReadonlySet<string>>): RouteDef[] {
  const historyOn = (): void => {
    if (!core.messages.historyEnabled) throw new GatewayError('NOT_FOUND', 'the conversation history is off (history.enabled is false in config.json)');
  };
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
      async handle({ instance, params }) {
        const m = await core.messages.get(instance.id, params.messageId!);
        if (!m) throw new GatewayError('NOT_FOUND', 'no such message (never seen by this instance, or older than history.days)');
        return { success: true, instanceId: instance.id, ...(await view(core, instance.id, m)) };
      },
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
      async handle({ instance }) {
        historyOn();
        const handed = await openHandovers(instance.id);
        // Status posts (status@broadcast) are kept for their lifecycle, but are not a chat.
        const chats = (await core.messages.chats(instance.id)).filter((c) => c.chatId !== 'status@broadcast').map((c) => ({
          chatId: c.chatId,
          ...phoneOfChat(c.chatId),
          ...(c.name !== undefined ? { name: c.name } : {}),
          isGroup: c.isGroup,
          lastMessageAt: new Date(c.lastMessageAt).toISOString(),
          unread: c.unread,
          handover: handed.has(c.chatId),
        }));
        return { success: true, instanceId: instance.id, chats };
      },
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
      async handle({ instance, params, query }) {
        historyOn();
        const chatId = requireChatId(params.chatId!);
        const page = await core.messages.chatMessages(instance.id, chatId, query.limit ?? 50, query.before);
        if (!page) throw new GatewayError('NOT_FOUND', 'no messages kept for this chat');
        const messages = await Promise.all(page.messages.map((m) => view(core, instance.id, m)));
        return { success: true, instanceId: instance.id, chatId, messages, nextBefore: page.nextBefore };
      },
    }),
  ];
}
