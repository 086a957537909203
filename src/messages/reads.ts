import type { Static } from 'typebox';
import type { Clock } from '../domain/clock.js';
import { GatewayError } from '../domain/errors.js';
import { phoneOfChat } from '../domain/phone.js';
import { CHAT_ID_PATTERN } from '../schemas/common.js';
import type { ChatMessagesBody, ChatsBody, MessageBody, MessageViewT } from '../schemas/message.js';
import type { MediaRepository } from '../storage/ports/media.js';
import type { MessageRepository, StoredMessage } from '../storage/ports/messages.js';
import { mediaUrl } from './hub.js';

/** What reading messages needs. */
export interface MessageReadParts {
  clock: Clock;
  messages: MessageRepository;
  media: MediaRepository;
}

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

/**
 * Reading the stored history, answered as the API shows it: one message with its status, the
 * chats, a chat's messages. The REST routes and the MCP tools both answer from here.
 */
export interface MessageReads {
  message(instanceId: string, messageId: string): Promise<Static<typeof MessageBody>>;
  chats(instanceId: string): Promise<Static<typeof ChatsBody>>;
  chatMessages(instanceId: string, chatId: string, page: { limit?: number | undefined; before?: string | undefined }): Promise<Static<typeof ChatMessagesBody>>;
}

export function messageReads(core: MessageReadParts, openHandovers: (instanceId: string) => Promise<ReadonlySet<string>>): MessageReads {
  const historyOn = (): void => {
    if (!core.messages.historyEnabled) throw new GatewayError('NOT_FOUND', 'the conversation history is off (history.enabled is false in config.json)');
  };
  return {
    async message(instanceId, messageId) {
      const m = await core.messages.get(instanceId, messageId);
      if (!m) throw new GatewayError('NOT_FOUND', 'no such message (never seen by this instance, or older than history.days)');
      return { success: true, instanceId, ...(await view(core, instanceId, m)) };
    },
    async chats(instanceId) {
      historyOn();
      const handed = await openHandovers(instanceId);
      // Status posts (status@broadcast) are kept for their lifecycle, but are not a chat.
      const chats = (await core.messages.chats(instanceId)).filter((c) => c.chatId !== 'status@broadcast').map((c) => ({
        chatId: c.chatId,
        ...phoneOfChat(c.chatId),
        ...(c.name !== undefined ? { name: c.name } : {}),
        isGroup: c.isGroup,
        lastMessageAt: new Date(c.lastMessageAt).toISOString(),
        unread: c.unread,
        handover: handed.has(c.chatId),
      }));
      return { success: true, instanceId, chats };
    },
    async chatMessages(instanceId, rawChatId, { limit, before }) {
      historyOn();
      const chatId = requireChatId(rawChatId);
      const page = await core.messages.chatMessages(instanceId, chatId, limit ?? 50, before);
      if (!page) throw new GatewayError('NOT_FOUND', 'no messages kept for this chat');
      const messages = await Promise.all(page.messages.map((m) => view(core, instanceId, m)));
      return { success: true, instanceId, chatId, messages, nextBefore: page.nextBefore };
    },
  };
}
