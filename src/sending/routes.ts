import type { GatewayConfig } from '../config/schema.js';
import type { SendService } from './send-service.js';

/** What the send routes are built from. */
export interface SendingParts {
  /** media limits; `webhooks.allowPrivateTargets` also rules what a media `url` may reach. */
  config: Pick<GatewayConfig, 'media' | 'webhooks'>;
  sender: Pick<SendService, 'send' | 'act'>;
  /** Replies a person sends from the panel (text and media) go into the audit log (never their text). */
  audit?: AuditPart;
  /** Whether a person took the chat over (the reply is then a handover reply). */
  handedOver?: (instanceId: string, chatId: string) => Promise<boolean>;
}
import { defineRoute, type RouteDef } from '../http/route.js';
import { parseInput } from '../schemas/check.js';
import { SendBody, SendContactInput, SendLocationInput, SendMediaBody, SendMediaFields, SendPollInput, SendTextInput } from '../schemas/send.js';
import { recipient } from './address.js';
import { withMediaBody } from './media-input.js';
import { sendMediaFile, sendText } from './send-actions.js';
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
      handle: ({ instance, body, principal }) => reply(principal, instance.id, recipient(body), () => sendText(core.sender, instance.id, body)),
    }),

    defineRoute({
      method: 'POST',
      path: '/api/:id/send-media',
      auth: 'instance',
      operationId: 'sendMedia',
      summary: 'Send a file (image, video, audio or document), a voice note, a sticker or a video note',
      description:
        'multipart/form-data with the `file`, or JSON with exactly one of `url` (fetched by the gateway) or `base64`; either way `phone` or `to`, `caption`, `replyTo`, and `as` (`auto`, `document`, `voice`, `sticker`, `video-note`). The type comes from the file content, not its name or `mimetype`. Limit: media.maxBytes (16 MiB). Nothing is sent or charged before the file is complete.',
      tags: ['messages'],
      multipart: SendMediaFields,
      multipartOrJson: true,
      example: { phone: '+15551234567', caption: 'Our menu' },
      jsonExample: { phone: '+15551234567', url: 'https://example.com/menu.pdf', fileName: 'menu.pdf', caption: 'Our menu', as: 'document' },
      response: {
        description: 'Sent.',
        schema: SendMediaBody,
        example: { success: true, instanceId: 'inst_k3J9xQ2mVb7n', messageId: '3EB0C767F26D4C4A5B8A', to: '15551234567@s.whatsapp.net', quotaRemaining: '41', mediaType: 'audio', as: 'voice' },
      },
      errors: [...SEND_ERRORS, 'MEDIA_FETCH_FAILED', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'],
      async handle({ koa, instance, principal }) {
        const missing = koa.is('multipart/form-data') ? 'file is required' : 'url or base64 is required (or send multipart/form-data with a file)';
        return withMediaBody(koa, core.config, (raw) => parseInput(SendMediaFields, raw), (file, fields) =>
          reply(principal, instance.id, recipient(fields), () => sendMediaFile(core, instance.id, file, fields, missing)),
        );
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
