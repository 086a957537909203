import type { SendService } from '../sending/send-service.js';
import { GatewayError } from '../domain/errors.js';
import { isE164, phoneDigits } from '../domain/phone.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { parseInput } from '../schemas/check.js';
import { StatusBody, StatusFields } from '../schemas/account.js';
import { prepareMedia, withMediaBody, type MediaConfig } from '../sending/media-input.js';

/** WhatsApp's status (stories) chat. */
export const STATUS_CHAT = 'status@broadcast';

/**
 * POST /api/{id}/status: a status post (a story), a text on a coloured background or an image,
 * video or audio, seen by `audience` (default: the address book). One credit, like a send, and
 * paced like one.
 */
export function statusRoute(core: { sender: Pick<SendService, 'send'>; config: MediaConfig }): RouteDef {
  return defineRoute({
    method: 'POST',
    path: '/api/:id/status',
    auth: 'instance',
    operationId: 'postStatus',
    summary: 'Post a status (story): a text, or media as send-media takes it; one credit',
    description:
      'JSON `{"text", "backgroundColor"?, "font"?}`, or a media status: JSON with `url` or `base64` (and `caption`?), or multipart/form-data with the `file`. `audience` (E.164 numbers or phone JIDs) says who sees it (in multipart, one `audience` field per person); without it, the contacts in the address book. Costs one credit on a non-premium instance.',
    tags: ['messages'],
    multipart: StatusFields,
    multipartOrJson: true,
    example: { caption: 'New in store', audience: ['+15551234567'] },
    jsonExample: { text: 'Open today until 8 pm', backgroundColor: '#25D366', font: 1 },
    response: { description: 'Posted.', schema: StatusBody, example: { success: true, instanceId: 'inst_k3J9xQ2mVb7n', messageId: '3EB0C767F26D4C4A5B8A', type: 'text', audience: 'contacts', quotaRemaining: '40' } },
    errors: ['MISSING_FIELD', 'INVALID_FIELD', 'INVALID_PHONE', 'MEDIA_FETCH_FAILED', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'PREMIUM_REQUIRED', 'QUOTA_EXHAUSTED', 'CONNECTION_NOT_READY', 'STORAGE_UNAVAILABLE', 'SENT_NOT_RECORDED', 'RATE_LIMITED'],
    async handle({ koa, instance }) {
      return withMediaBody(koa, core.config, (raw) => parseInput(StatusFields, raw), async (file, fields) => {
        const audience = fields.audience?.map((a) => (isE164(a) ? `${phoneDigits(a)}@s.whatsapp.net` : a));
        const common = { to: STATUS_CHAT, ...(audience ? { audience } : {}) };
        let type: 'text' | 'image' | 'video' | 'audio';
        let result;
        if (file) {
          if (fields.text !== undefined || fields.backgroundColor !== undefined || fields.font !== undefined) {
            throw new GatewayError('INVALID_FIELD', 'text, backgroundColor and font are for text statuses; a media status takes a caption');
          }
          const media = await prepareMedia(file, 'auto', core.config);
          if (media.mediaType === 'document') throw new GatewayError('UNSUPPORTED_MEDIA_TYPE', `a status is a text, an image, a video or audio; this file is ${media.mimetype}`);
          type = media.mediaType;
          result = await core.sender.send(instance.id, { kind: 'status', ...common, media: { ...media, ...(fields.caption ? { caption: fields.caption } : {}) } });
        } else {
          if (fields.text === undefined) throw new GatewayError('MISSING_FIELD', 'text is required (or url, base64 or a file for a media status)');
          if (fields.caption !== undefined) throw new GatewayError('INVALID_FIELD', 'caption is for media statuses');
          type = 'text';
          result = await core.sender.send(instance.id, {
            kind: 'status',
            ...common,
            text: fields.text,
            ...(fields.backgroundColor !== undefined ? { backgroundColor: fields.backgroundColor } : {}),
            ...(fields.font !== undefined ? { font: fields.font } : {}),
          });
        }
        return { success: true, instanceId: instance.id, messageId: result.messageId, type, audience: audience ? audience.length : 'contacts', quotaRemaining: result.quotaRemaining };
      }, ['audience']);
    },
  });
}
