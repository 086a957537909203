import { basename } from 'node:path';
import type { GatewayConfig } from '../config/schema.js';
import type { SendService } from './send-service.js';

/** What the send routes are built from. */
export interface SendingParts {
  config: Pick<GatewayConfig, 'media'>;
  sender: Pick<SendService, 'send' | 'act'>;
  /** Replies a person sends from the panel (text and media) go into the audit log (never their text). */
  audit?: AuditPart;
  /** Whether a person took the chat over (the reply is then a handover reply). */
  handedOver?: (instanceId: string, chatId: string) => Promise<boolean>;
}
import { GatewayError } from '../domain/errors.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { parseInput } from '../schemas/check.js';
import { SendBody, SendContactInput, SendLocationInput, SendMediaBody, SendMediaFields, SendPollInput, SendTextInput } from '../schemas/send.js';
import { mentionJids, recipient } from './address.js';
import { detectMedia } from '../media/media-type.js';
import { withUpload } from '../http/upload.js';
import type { Principal } from '../http/route.js';
import { audited, type AuditPart } from '../audit/audit-part.js';

const SEND_ERRORS = ['MISSING_FIELD', 'INVALID_FIELD', 'INVALID_PHONE', 'PREMIUM_REQUIRED', 'QUOTA_EXHAUSTED', 'CONNECTION_NOT_READY', 'STORAGE_UNAVAILABLE', 'SENT_NOT_RECORDED', 'RATE_LIMITED'] as const;

/** Sending text and media; each costs one credit on a non-premium instance. */
export function sendingRoutes(core: SendingParts): RouteDef[] {
  /** A send from a panel session is a person's reply: audited (API and flow sends are not, they are the traffic). */
  const reply = async <T>(principal: Principal, instanceId: string, to: string, send: () => Promise<T>): Promise<T> => {
    if (principal.kind !== 'session' || !core.audit) return send();
    const handed = (await core.handedOver?.(instanceId, to).catch(() => false)) ?? false;
    return audited(core.audit, principal, handed ? 'handover.reply' : 'chat.reply', { instanceId, target: to }, send);
  };
  return [
    defineRoute({
      method: 'POST',
      path: '/api/:id/send',
      auth: 'instance',
      operationId: 'sendText',
      summary: 'Send a text message',
      description: 'To `phone` (E.164) or `to` (a chat id: phone JID, LID or group). Costs one credit on a non-premium instance, debited only once the message was sent.',
      tags: ['messages'],
      body: SendTextInput,
      example: { phone: '+15551234567', message: 'Hello!' },
      response: {
        description: 'Sent.',
        schema: SendBody,
        example: { success: true, instanceId: 'inst_k3J9xQ2mVb7n', messageId: '3EB0C767F26D4C4A5B8A', to: '15551234567@s.whatsapp.net', quotaRemaining: '41' },
      },
      errors: SEND_ERRORS,
      async handle({ instance, body, principal }) {
        const to = recipient(body);
        const mentions = mentionJids(body.mentions);
        const result = await reply(principal, instance.id, to, () =>
          core.sender.send(instance.id, {
            kind: 'text',
            to,
            text: body.message,
            ...(body.replyTo !== undefined ? { replyTo: body.replyTo } : {}),
            ...(mentions ? { mentions } : {}),
          }),
        );
        return { success: true, instanceId: instance.id, messageId: result.messageId, to, quotaRemaining: result.quotaRemaining };
      },
    }),

    defineRoute({
      method: 'POST',
      path: '/api/:id/send-media',
      auth: 'instance',
      operationId: 'sendMedia',
      summary: 'Send a file (image, video, audio or document)',
      description: 'multipart/form-data: `file` (required), `phone` or `to`, `caption`, `replyTo`. The type comes from the file content, not its name. Limit: media.maxBytes (16 MiB).',
      tags: ['messages'],
      multipart: SendMediaFields,
      example: { phone: '+15551234567', caption: 'Our menu' },
      response: { description: 'Sent.', schema: SendMediaBody },
      errors: [...SEND_ERRORS, 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'],
      async handle({ koa, instance, principal }) {
        return withUpload(koa, core.config.media.maxBytes, async (file, raw) => {
          const fields = parseInput(SendMediaFields, raw);
          const to = recipient(fields);
          if (!file) throw new GatewayError('MISSING_FIELD', 'file is required');
          const media = await detectMedia(file.filepath, file.mimetype);
          const fileName = basename(file.originalFilename ?? 'file').slice(0, 200) || 'file';
          const result = await reply(principal, instance.id, to, () =>
            core.sender.send(instance.id, {
              kind: 'media',
              to,
              mediaType: media.mediaType,
              mimetype: media.mimetype,
              path: file.filepath,
              fileName,
              ...(fields.caption !== undefined && fields.caption !== '' ? { caption: fields.caption } : {}),
              ...(fields.replyTo !== undefined ? { replyTo: fields.replyTo } : {}),
            }),
          );
          return { success: true, instanceId: instance.id, messageId: result.messageId, to, quotaRemaining: result.quotaRemaining, mediaType: media.mediaType };
        });
      },
    }),

    defineRoute({
      method: 'POST',
      path: '/api/:id/send-location',
      auth: 'instance',
      operationId: 'sendLocation',
      summary: 'Send a location',
      tags: ['messages'],
      body: SendLocationInput,
      example: { phone: '+15551234567', latitude: 52.52, longitude: 13.405, name: 'Shop', address: 'Main street 1' },
      response: { description: 'Sent.', schema: SendBody },
      errors: SEND_ERRORS,
      async handle({ instance, body }) {
        const to = recipient(body);
        const result = await core.sender.send(instance.id, {
          kind: 'location',
          to,
          latitude: body.latitude,
          longitude: body.longitude,
          ...(body.name !== undefined ? { name: body.name } : {}),
          ...(body.address !== undefined ? { address: body.address } : {}),
          ...(body.replyTo !== undefined ? { replyTo: body.replyTo } : {}),
        });
        return { success: true, instanceId: instance.id, messageId: result.messageId, to, quotaRemaining: result.quotaRemaining };
      },
    }),

    defineRoute({
      method: 'POST',
      path: '/api/:id/send-contact',
      auth: 'instance',
      operationId: 'sendContact',
      summary: 'Send 1 to 10 contact cards (the gateway builds the vCards)',
      tags: ['messages'],
      body: SendContactInput,
      example: { phone: '+15551234567', contacts: [{ name: 'Support', phone: '+15557654321' }] },
      response: { description: 'Sent.', schema: SendBody },
      errors: SEND_ERRORS,
      async handle({ instance, body }) {
        const to = recipient(body);
        const result = await core.sender.send(instance.id, { kind: 'contact', to, contacts: body.contacts, ...(body.replyTo !== undefined ? { replyTo: body.replyTo } : {}) });
        return { success: true, instanceId: instance.id, messageId: result.messageId, to, quotaRemaining: result.quotaRemaining };
      },
    }),

    defineRoute({
      method: 'POST',
      path: '/api/:id/send-poll',
      auth: 'instance',
      operationId: 'sendPoll',
      summary: 'Send a poll with 2 to 12 options',
      tags: ['messages'],
      body: SendPollInput,
      example: { phone: '+15551234567', question: 'Lunch?', options: ['Pizza', 'Sushi'], multiple: false },
      response: { description: 'Sent.', schema: SendBody },
      errors: SEND_ERRORS,
      async handle({ instance, body }) {
        const to = recipient(body);
        const result = await core.sender.send(instance.id, {
          kind: 'poll',
          to,
          question: body.question,
          options: body.options,
          multiple: body.multiple ?? false,
          ...(body.replyTo !== undefined ? { replyTo: body.replyTo } : {}),
        });
        return { success: true, instanceId: instance.id, messageId: result.messageId, to, quotaRemaining: result.quotaRemaining };
      },
    }),
  ];
}
