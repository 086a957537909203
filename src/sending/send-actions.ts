import type { Static } from 'typebox';
import { GatewayError } from '../domain/errors.js';
import type { SendBody, SendMediaBody, SendTextInput } from '../schemas/send.js';
import { mentionJids, recipient } from './address.js';
import { prepareMedia, type MediaAs, type MediaConfig } from './media-input.js';
import type { SendService } from './send-service.js';

type Sender = Pick<SendService, 'send'>;

/** A text to a person or group: one credit on a non-premium instance, through the send service. */
export async function sendText(sender: Sender, instanceId: string, body: Static<typeof SendTextInput>): Promise<Static<typeof SendBody>> {
  const to = recipient(body);
  const mentions = mentionJids(body.mentions);
  const result = await sender.send(instanceId, {
    kind: 'text',
    to,
    text: body.message,
    ...(body.replyTo !== undefined ? { replyTo: body.replyTo } : {}),
    ...(mentions ? { mentions } : {}),
  });
  return { success: true, instanceId, messageId: result.messageId, to, quotaRemaining: result.quotaRemaining };
}

/** The fields of a media send besides the file itself. */
export interface MediaSendFields {
  phone?: string | undefined;
  to?: string | undefined;
  caption?: string | undefined;
  replyTo?: string | undefined;
  as?: MediaAs | undefined;
}

/**
 * A file already on disk (uploaded, fetched from a URL or decoded), typed by content and sent as
 * `as` says: one credit, through the send service. `missing` is the 400 for no file.
 */
export async function sendMediaFile(
  parts: { config: MediaConfig; sender: Sender },
  instanceId: string,
  file: { path: string; claimedType: string | null; fileName: string | null } | null,
  fields: MediaSendFields,
  missing: string,
): Promise<Static<typeof SendMediaBody>> {
  const to = recipient(fields);
  if (!file) throw new GatewayError('MISSING_FIELD', missing);
  const as = fields.as ?? 'auto';
  const media = await prepareMedia(file, as, parts.config);
  const result = await parts.sender.send(instanceId, {
    kind: 'media',
    to,
    ...media,
    ...(fields.caption !== undefined && fields.caption !== '' && media.as !== 'voice' && media.as !== 'sticker' ? { caption: fields.caption } : {}),
    ...(fields.replyTo !== undefined ? { replyTo: fields.replyTo } : {}),
  });
  return {
    success: true,
    instanceId,
    messageId: result.messageId,
    to,
    quotaRemaining: result.quotaRemaining,
    mediaType: media.as === 'sticker' ? 'sticker' : media.mediaType,
    ...(as !== 'auto' ? { as } : {}),
  };
}
