import { readFile } from 'node:fs/promises';
import Type from 'typebox';
import type { SandboxConnection, SandboxInbound } from '../connection/sandbox.js';
import { GatewayError } from '../domain/errors.js';
import { readJsonBody } from '../http/json-body.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { withUpload } from '../http/upload.js';
import { detectMedia } from '../media/media-type.js';
import { parseInput } from '../schemas/check.js';
import { MessageId, Phone, closed } from '../schemas/common.js';
import { MAX_TEXT, Recipient } from '../schemas/send.js';
import { recipient } from '../sending/address.js';

const Ok = closed({ success: Type.Literal(true), instanceId: Type.String() });
const OutboundInput = closed({
  ...Recipient,
  message: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_TEXT, description: 'The text (required without a file; the caption with one).' })),
  as: Type.Optional(Type.Enum(['voice', 'sticker', 'video-note'], { description: 'With a file: what it shows as (its media.kind).' })),
});
const OutboundBody = closed({ success: Type.Literal(true), instanceId: Type.String(), messageId: MessageId });
const ContactInput = closed({
  phone: Type.Optional(Phone),
  lid: Type.Optional(Type.String({ pattern: '^[0-9]{5,25}$', description: 'The LID (digits) of this contact: GET /contacts maps it both ways.' })),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  about: Type.Optional(Type.String({ maxLength: 139 })),
  pictureUrl: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  exists: Type.Optional(Type.Boolean({ description: 'false: the number has no WhatsApp (default true).' })),
});
const AccountInput = closed({
  business: Type.Optional(Type.Boolean({ description: 'Play a WhatsApp Business account (labels work) or a personal one (the default).' })),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 25, description: "The account's push name." })),
});
const LabelInput = closed({
  id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }),
  name: Type.String({ minLength: 1, maxLength: 100 }),
  color: Type.Optional(Type.Integer({ minimum: 0, maximum: 19 })),
  deleted: Type.Optional(Type.Boolean()),
});

/** Media kinds the sandbox can play (`as`), per detected type. */
function mediaKind(type: NonNullable<SandboxInbound['media']>['type'], as: 'voice' | 'sticker' | 'video-note' | undefined): NonNullable<SandboxInbound['media']>['kind'] {
  return as ?? type;
}

/**
 * The sandbox plays the account's side: its phone sending (message.sent), what WhatsApp knows of a
 * contact (name, about, picture, LID), the account type (personal or Business), labels edited on
 * the phone (label.updated).
 */
export function sandboxContactsRoutes(sandboxOf: (id: string, sandbox: boolean) => SandboxConnection, maxMediaBytes: number): RouteDef[] {
  const common = { auth: 'instance' as const, tags: ['sandbox'] };
  return [
    defineRoute({
      ...common,
      method: 'POST',
      path: '/api/:id/sandbox/outbound',
      operationId: 'sandboxOutbound',
      summary: "Play a message the account sends from its phone (a message.sent event, and history)",
      description: 'JSON, or multipart/form-data with a `file` (media; `as` makes it a voice note, sticker or video note) and the same fields.',
      multipart: OutboundInput,
      multipartOrJson: true,
      example: { phone: '+15551234567', message: 'Sent from my phone' },
      response: { description: 'Played and stored.', schema: OutboundBody, example: { success: true, instanceId: 'inst_k3J9xQ2mVb7n', messageId: 'SBX3EB0C767F26D4C4A5B8A' } },
      errors: ['NOT_FOUND', 'MISSING_FIELD', 'INVALID_FIELD', 'INVALID_PHONE', 'CONNECTION_NOT_READY', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'],
      async handle({ koa, instance }) {
        const conn = sandboxOf(instance.id, instance.sandbox);
        const play = async (raw: unknown, media?: SandboxInbound['media']) => {
          const body = parseInput(OutboundInput, raw);
          const to = recipient(body);
          if (body.message === undefined && !media) throw new GatewayError('MISSING_FIELD', 'message is required (or send a file)');
          if (body.as !== undefined && !media) throw new GatewayError('INVALID_FIELD', 'as needs a file');
          const sent = await conn.outbound({ to, ...(body.message !== undefined ? { message: body.message } : {}), ...(media ? { media: { ...media, kind: mediaKind(media.type, body.as) } } : {}) });
          return { success: true, instanceId: instance.id, messageId: sent.messageId };
        };
        if (koa.is('multipart/form-data')) {
          return withUpload(koa, maxMediaBytes, async (file, fields) => {
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
      path: '/api/:id/sandbox/contact',
      operationId: 'sandboxContact',
      summary: 'Play what WhatsApp knows of a contact: name, about text, picture, LID, whether it exists',
      body: ContactInput,
      example: { phone: '+15551234567', lid: '200000015551234', name: 'Ann Silva', about: 'Available' },
      response: { description: 'Played.', schema: Ok, example: { success: true, instanceId: 'inst_k3J9xQ2mVb7n' } },
      errors: ['NOT_FOUND', 'MISSING_FIELD', 'INVALID_FIELD', 'INVALID_PHONE', 'CONNECTION_NOT_READY'],
      handle({ instance, body }) {
        if (body.phone === undefined && body.lid === undefined) throw new GatewayError('MISSING_FIELD', 'phone (or lid) is required');
        sandboxOf(instance.id, instance.sandbox).contacts.playContact(body);
        return { success: true, instanceId: instance.id };
      },
    }),
    defineRoute({
      ...common,
      method: 'POST',
      path: '/api/:id/sandbox/account',
      operationId: 'sandboxAccount',
      summary: 'Play the account type (personal or WhatsApp Business) and its name',
      body: AccountInput,
      example: { business: true },
      response: { description: 'Played.', schema: Ok, example: { success: true, instanceId: 'inst_k3J9xQ2mVb7n' } },
      errors: ['NOT_FOUND', 'INVALID_FIELD', 'CONNECTION_NOT_READY'],
      handle({ instance, body }) {
        sandboxOf(instance.id, instance.sandbox).contacts.playAccount(body);
        return { success: true, instanceId: instance.id };
      },
    }),
    defineRoute({
      ...common,
      method: 'POST',
      path: '/api/:id/sandbox/label',
      operationId: 'sandboxLabel',
      summary: 'Play a label made, changed or deleted on the phone (a label.updated event; Business accounts)',
      body: LabelInput,
      example: { id: '1', name: 'New customer', color: 1 },
      response: { description: 'Played.', schema: Ok, example: { success: true, instanceId: 'inst_k3J9xQ2mVb7n' } },
      errors: ['NOT_FOUND', 'MISSING_FIELD', 'INVALID_FIELD', 'NOT_BUSINESS', 'CONNECTION_NOT_READY'],
      async handle({ instance, body }) {
        await sandboxOf(instance.id, instance.sandbox).contacts.playLabel(body);
        return { success: true, instanceId: instance.id };
      },
    }),
  ];
}
