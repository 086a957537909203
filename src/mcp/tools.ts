import Type, { type Static, type TSchema } from 'typebox';
import type { ConnectionActions } from '../connection/types.js';
import type { MessageReads } from '../messages/reads.js';
import { parseInput } from '../schemas/check.js';
import { closed } from '../schemas/common.js';
import { ChatMessagesBody, ChatMessagesQuery, ChatsBody, MessageBody } from '../schemas/message.js';
import { CheckBody, CheckInput, GroupsBody, SendBody, SendMediaBody, SendMediaFields, SendTextInput } from '../schemas/send.js';
import { checkNumbers, listGroups } from '../sending/directory.js';
import { withMediaJson, type MediaConfig } from '../sending/media-input.js';
import { sendMediaFile, sendText } from '../sending/send-actions.js';
import type { SendService } from '../sending/send-service.js';

/** What the tools act through: the same services the REST routes call. */
export interface ToolParts {
  /** Media limits and `webhooks.allowPrivateTargets` (what a media `url` may reach), as for send-media. */
  config: MediaConfig;
  /** Sends (plan, credit, pacing) and the free lookups on the connection. */
  sender: Pick<SendService, 'send'> & ConnectionActions;
  reads: MessageReads;
}

/** One MCP tool: its schemas (TypeBox, so the JSON Schema it lists is the one its input is checked with) and what it runs. */
export interface GatewayTool {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly input: TSchema;
  /** The schema of the REST answer it returns as `structuredContent`. */
  readonly output: TSchema;
  /** Reads only (MCP's readOnlyHint): clients may call it without asking the person. */
  readonly readOnly: boolean;
  /** Reaches WhatsApp (MCP's openWorldHint), rather than reading the gateway's own history. */
  readonly openWorld: boolean;
  /** Checks `args` against `input` (the same 400 codes and messages as the REST body check), then runs. */
  run(instanceId: string, args: unknown): Promise<Record<string, unknown>>;
}

function tool<I extends TSchema>(spec: Omit<GatewayTool, 'run'> & { input: I; act(instanceId: string, args: Static<I>): Promise<Record<string, unknown>> }): GatewayTool {
  const { act, ...rest } = spec;
  return { ...rest, run: (instanceId, args) => act(instanceId, parseInput(spec.input, args)) };
}

/** send-media's JSON fields with `url` required and no `base64`: an agent hands over a link, not the bytes. */
const { base64: _base64, url: _url, ...mediaFields } = SendMediaFields.properties;
const MediaFromUrlInput = closed({
  ...mediaFields,
  url: Type.String({
    minLength: 1,
    maxLength: 4096,
    description: 'http(s) URL the gateway fetches the file from (private and loopback addresses are refused unless webhooks.allowPrivateTargets; at most media.maxBytes).',
  }),
});

const NoInput = closed({});
const ChatMessagesInput = closed({
  chatId: Type.String({ minLength: 1, maxLength: 200, description: 'The chat: <digits>@s.whatsapp.net (a phone), <digits>@lid or <id>@g.us (a group), as list_chats shows it.' }),
  ...ChatMessagesQuery.properties,
});
const MessageInput = closed({ messageId: Type.String({ minLength: 1, maxLength: 128, description: 'The messageId a send answered, or one from get_chat_messages.' }) });

const CREDIT = 'Costs one credit on a non-premium instance (debited once sent); waits its turn in the anti-ban pacing like every send.';

/** The tools of an instance's MCP server, each the REST route it stands for. */
export function gatewayTools(parts: ToolParts): GatewayTool[] {
  return [
    tool({
      name: 'send_text',
      title: 'Send a WhatsApp text',
      description: `Sends a text message to \`phone\` (E.164, e.g. +15551234567) or \`to\` (a chat id, e.g. a group). ${CREDIT} Same as POST /api/{id}/send.`,
      input: SendTextInput,
      output: SendBody,
      readOnly: false,
      openWorld: true,
      act: (id, args) => sendText(parts.sender, id, args),
    }),
    tool({
      name: 'send_media',
      title: 'Send a file from a URL',
      description: `Fetches the file at \`url\` and sends it to \`phone\` or \`to\`: an image, video, audio or document (typed by its content), or as \`as\` says (document, voice, sticker, video-note), with an optional caption. ${CREDIT} Same as POST /api/{id}/send-media with a JSON url.`,
      input: MediaFromUrlInput,
      output: SendMediaBody,
      readOnly: false,
      openWorld: true,
      act: (id, args) => withMediaJson(parts.config, args, (file, fields) => sendMediaFile(parts, id, file, fields, 'url is required')),
    }),
    tool({
      name: 'list_chats',
      title: 'List chats',
      description: 'The chats of the conversation history, newest first, with unread counts and whether a person took over (handover). Same as GET /api/{id}/chats.',
      input: NoInput,
      output: ChatsBody,
      readOnly: true,
      openWorld: false,
      act: (id) => parts.reads.chats(id),
    }),
    tool({
      name: 'get_chat_messages',
      title: "Read a chat's messages",
      description: "A chat's messages, in and out, newest first (`limit` 1-200, default 50); pass `nextBefore` as `before` for older ones. Same as GET /api/{id}/chats/{chatId}/messages.",
      input: ChatMessagesInput,
      output: ChatMessagesBody,
      readOnly: true,
      openWorld: false,
      act: (id, { chatId, ...page }) => parts.reads.chatMessages(id, chatId, page),
    }),
    tool({
      name: 'check_numbers',
      title: 'Check numbers on WhatsApp',
      description: 'Which of 1 to 50 numbers (E.164) have WhatsApp, and the chat id to write to. Free. Same as POST /api/{id}/contacts/check.',
      input: CheckInput,
      output: CheckBody,
      readOnly: true,
      openWorld: true,
      act: (id, { phones }) => checkNumbers(parts.sender, id, phones),
    }),
    tool({
      name: 'get_message',
      title: 'Read a message and its status',
      description: 'One message, in or out, with its status (pending, sent, delivered, read, played or failed). Same as GET /api/{id}/messages/{messageId}.',
      input: MessageInput,
      output: MessageBody,
      readOnly: true,
      openWorld: false,
      act: (id, { messageId }) => parts.reads.message(id, messageId),
    }),
    tool({
      name: 'list_groups',
      title: 'List groups',
      description: 'The groups the account is in, with their subject and size. Same as GET /api/{id}/groups.',
      input: NoInput,
      output: GroupsBody,
      readOnly: true,
      openWorld: true,
      act: (id) => listGroups(parts.sender, id),
    }),
  ];
}
