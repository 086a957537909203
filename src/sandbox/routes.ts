import Type from 'typebox';
import type { GatewayConfig } from '../config/schema.js';
import type { ConnectionManager } from '../connection/manager.js';
import type { Feature } from '../features/feature.js';
import type { StatusReporter } from '../status/status-reporter.js';
import { sandboxContactsRoutes } from './contacts-routes.js';
import { GatewayError } from '../domain/errors.js';
import { readJsonBody } from '../http/json-body.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { MessageId, Phone, closed } from '../schemas/common.js';
import { MAX_TEXT } from '../schemas/send.js';
import { InstanceStatusSchema, Location, PollInfo } from '../schemas/events.js';
import { detectMedia } from '../media/media-type.js';
import { withUpload } from '../http/upload.js';
import { parseInput } from '../schemas/check.js';
import { readFile } from 'node:fs/promises';
import { SandboxConnection, type SandboxInbound } from '../connection/sandbox.js';
import { sandboxAccountRoutes } from './account-routes.js';

/** What the sandbox's routes are built from. */
export interface SandboxParts {
  config: Pick<GatewayConfig, 'media'>;
  manager: Pick<ConnectionManager, 'get'>;
  status: Pick<StatusReporter, 'view'>;
}

/** The sandbox's own routes: play the phone and the other side of a sandbox instance. */
export function sandboxFeature(parts: SandboxParts): Feature {
  return { name: 'sandbox', routes: sandboxRoutes(parts) };
}

const StatusOnly = closed({ success: Type.Literal(true), instanceId: Type.String(), status: InstanceStatusSchema });
const InboundInput = closed({
  from: Type.Optional(Phone),
  lid: Type.Optional(Type.String({ pattern: '^[0-9]{5,25}$', description: 'The sender writes from this LID (digits); `from` may then be absent, and is reported only when given too.' })),
  chatId: Type.Optional(Type.String({ pattern: '^[0-9]{5,25}(-[0-9]{5,15})?@g\\.us$', description: 'A group: the message arrives in it from `from`.' })),
  message: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_TEXT, description: 'The text (required without a file; the caption with one).' })),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  replyTo: Type.Optional(MessageId),
  as: Type.Optional(Type.Enum(['voice', 'sticker', 'video-note'], { description: 'With a file: what it shows as (its media.kind).' })),
});
const ReceiptInput = closed({ messageId: MessageId, status: Type.Enum(['delivered', 'read', 'played']) });
const ReactInput = closed({ messageId: MessageId, emoji: Type.String({ maxLength: 16, description: '"" removes the reaction.' }), from: Phone });
const Ok = closed({ success: Type.Literal(true), instanceId: Type.String() });
const InboundBody = closed({ success: Type.Literal(true), instanceId: Type.String(), messageId: MessageId });
const SentItem = closed({
  messageId: MessageId,
  to: Type.String(),
  phone: Type.Union([Phone, Type.Null()]),
  type: Type.String(),
  message: Type.Optional(Type.String()),
  caption: Type.Optional(Type.String()),
  replyTo: Type.Optional(Type.String()),
  location: Type.Optional(Location),
  contacts: Type.Optional(Type.Array(closed({ name: Type.String(), phone: Phone, vcard: Type.String() }))),
  poll: Type.Optional(PollInfo),
  as: Type.Optional(Type.Enum(['voice', 'sticker', 'video-note'])),
  audience: Type.Optional(Type.Array(Type.String(), { description: 'Who sees a status post (`to` is status@broadcast); absent: the contacts.' })),
  sentAt: Type.String(),
});
const SentBody = closed({ success: Type.Literal(true), instanceId: Type.String(), messages: Type.Array(SentItem) });
const ActionsBody = closed({
  success: Type.Literal(true),
  instanceId: Type.String(),
  actions: Type.Array(
    closed({
      action: Type.Enum(['react', 'edit', 'delete', 'read', 'presence', 'subscribe', 'reject-call', 'archive', 'unarchive', 'pin', 'unpin', 'mute', 'unmute', 'unread', 'delete-chat', 'block', 'unblock', 'label-add', 'label-remove', 'profile', 'picture']),
      chatId: Type.String(),
      messageId: Type.Optional(Type.String()),
      callId: Type.Optional(Type.String()),
      labelId: Type.Optional(Type.String()),
      emoji: Type.Optional(Type.String()),
      text: Type.Optional(Type.String()),
      state: Type.Optional(Type.String()),
      at: Type.String(),
    }),
  ),
});

/** Drive a simulated connection: scan, disconnect, receive a message, list what was sent. */
function sandboxRoutes(core: SandboxParts): RouteDef[] {
  const sandboxOf = (id: string, sandbox: boolean): SandboxConnection => {
    const connection = core.manager.get(id)?.connection;
    if (!sandbox) throw new GatewayError('NOT_FOUND', 'sandbox routes exist only for sandbox instances');
    if (!(connection instanceof SandboxConnection)) throw new GatewayError('CONNECTION_NOT_READY', 'the sandbox connection is not running in this process (is the daemon running?)');
    return connection;
  };
  const common = { auth: 'instance' as const, tags: ['sandbox'], errors: ['NOT_FOUND'] as const };
  return [
    defineRoute({
      ...common,
      method: 'POST',
      path: '/api/:id/sandbox/scan',
      operationId: 'sandboxScan',
      summary: 'The simulated phone scans the QR: the instance connects',
      response: { description: 'Connected.', schema: StatusOnly },
      async handle({ instance }) {
        const conn = sandboxOf(instance.id, instance.sandbox);
        await conn.scan();
        return { success: true, instanceId: instance.id, status: core.status.view(instance).status };
      },
    }),
    defineRoute({
      ...common,
      method: 'POST',
      path: '/api/:id/sandbox/disconnect',
      operationId: 'sandboxDisconnect',
      summary: 'The simulated connection drops; scan reconnects',
      response: { description: 'Disconnected.', schema: StatusOnly },
      handle({ instance }) {
        sandboxOf(instance.id, instance.sandbox).disconnect();
        return { success: true, instanceId: instance.id, status: core.status.view(instance).status };
      },
    }),
    defineRoute({
      ...common,
      method: 'POST',
      path: '/api/:id/sandbox/inbound',
      operationId: 'sandboxInbound',
      summary: 'Play a received message (webhook, chatbot flows, history)',
      description: 'JSON, or multipart/form-data with a `file` (an inbound media message) and the same fields.',
      multipart: InboundInput,
      multipartOrJson: true,
      example: { from: '+15551234567', message: 'hi', name: 'Ann' },
      response: { description: 'Received and stored.', schema: InboundBody },
      errors: ['NOT_FOUND', 'MISSING_FIELD', 'INVALID_FIELD', 'INVALID_PHONE', 'CONNECTION_NOT_READY', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'],
      async handle({ koa, instance }) {
        const conn = sandboxOf(instance.id, instance.sandbox);
        const play = async (raw: unknown, media?: SandboxInbound['media']) => {
          const body = parseInput(InboundInput, raw);
          if (body.from === undefined && body.lid === undefined) throw new GatewayError('MISSING_FIELD', 'from (or lid) is required');
          if (body.message === undefined && !media) throw new GatewayError('MISSING_FIELD', 'message is required (or send a file)');
          if (body.as !== undefined && !media) throw new GatewayError('INVALID_FIELD', 'as needs a file');
          const { as, ...rest } = body;
          const received = await conn.inbound({ ...rest, ...(media ? { media: { ...media, kind: as ?? media.type } } : {}) } as SandboxInbound);
          return { success: true, instanceId: instance.id, messageId: received.messageId };
        };
        if (koa.is('multipart/form-data')) {
          return withUpload(koa, core.config.media.maxBytes, async (file, fields) => {
            if (!file) throw new GatewayError('MISSING_FIELD', 'file is required in a multipart body');
            const detected = await detectMedia(file.filepath, file.mimetype);
            const bytes = await readFile(file.filepath);
            return play(fields, { type: detected.mediaType, mimetype: detected.mimetype, ...(file.originalFilename ? { fileName: file.originalFilename.slice(0, 200) } : {}), bytes });
          });
        }
        await readJsonBody(koa);
        return play(koa.request.body ?? {});
      },
    }),
    defineRoute({
      ...common,
      method: 'POST',
      path: '/api/:id/sandbox/receipt',
      operationId: 'sandboxReceipt',
      summary: 'Play the recipient\'s receipt for a sent message (delivered, read, played)',
      body: ReceiptInput,
      example: { messageId: '3EB0C767F26D4C4A5B8A', status: 'read' },
      response: { description: 'Played.', schema: Ok },
      errors: ['NOT_FOUND', 'MISSING_FIELD', 'INVALID_FIELD', 'CONNECTION_NOT_READY'],
      async handle({ instance, body }) {
        await sandboxOf(instance.id, instance.sandbox).receipt(body.messageId, body.status);
        return { success: true, instanceId: instance.id };
      },
    }),
    defineRoute({
      ...common,
      method: 'POST',
      path: '/api/:id/sandbox/react',
      operationId: 'sandboxReact',
      summary: 'Play a reaction of `from` to a message',
      body: ReactInput,
      example: { messageId: '3EB0C767F26D4C4A5B8A', emoji: '👍', from: '+15551234567' },
      response: { description: 'Played.', schema: Ok },
      errors: ['NOT_FOUND', 'MISSING_FIELD', 'INVALID_FIELD', 'INVALID_PHONE', 'CONNECTION_NOT_READY'],
      async handle({ instance, body }) {
        await sandboxOf(instance.id, instance.sandbox).playReaction(body);
        return { success: true, instanceId: instance.id };
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      path: '/api/:id/sandbox/sent',
      operationId: 'sandboxSent',
      summary: 'What the instance has sent, oldest first (bounded)',
      response: { description: 'The sent messages.', schema: SentBody },
      handle({ instance }) {
        return { success: true, instanceId: instance.id, messages: [...sandboxOf(instance.id, instance.sandbox).sent()] };
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      path: '/api/:id/sandbox/actions',
      operationId: 'sandboxActions',
      summary: 'What the instance did besides sending (reactions, edits, deletes, read marks, presence, presence subscriptions, rejected calls; chat settings, blocks, labels, profile changes), oldest first',
      response: { description: 'The actions.', schema: ActionsBody },
      handle({ instance }) {
        return { success: true, instanceId: instance.id, actions: [...sandboxOf(instance.id, instance.sandbox).actions()] };
      },
    }),
    ...sandboxAccountRoutes(sandboxOf),
    ...sandboxContactsRoutes(sandboxOf, core.config.media.maxBytes),
  ];
}
