import type { AnyMessageContent, MiscMessageGenerationOptions, WAMessage } from '@whiskeysockets/baileys';
import { GatewayError } from '../../domain/errors.js';
import { isE164, phoneDigits } from '../../domain/phone.js';
import type { MessageRef, Outgoing, OutgoingMedia } from '../types.js';
import { vcard } from '../../domain/vcard.js';
import type { Quotable } from './recent-sends.js';

/** "+15551234567" -> "15551234567@s.whatsapp.net" */
export function toJid(phone: string): string {
  if (!isE164(phone)) throw new GatewayError('INVALID_PHONE', `not an E.164 phone number: ${phone}`);
  return `${phoneDigits(phone)}@s.whatsapp.net`;
}

/** What sendMessage gets for one outgoing message. */
export function toContent(message: Outgoing): AnyMessageContent {
  if (message.kind === 'text') return message.mentions ? { text: message.text, mentions: message.mentions } : { text: message.text };
  if (message.kind === 'location') {
    return {
      location: {
        degreesLatitude: message.latitude,
        degreesLongitude: message.longitude,
        ...(message.name !== undefined ? { name: message.name } : {}),
        ...(message.address !== undefined ? { address: message.address } : {}),
      },
    };
  }
  if (message.kind === 'contact') {
    const cards = message.contacts.map((c) => ({ displayName: c.name, vcard: vcard(c.name, c.phone) }));
    return { contacts: { displayName: cards.length === 1 ? cards[0]!.displayName : `${cards.length} contacts`, contacts: cards } };
  }
  if (message.kind === 'poll') {
    // selectableCount 0 lets people pick any number of options; 1 exactly one.
    // The secret chosen before the send (stored with the poll): the votes come back encrypted with it.
    const messageSecret = message.secret !== undefined ? { messageSecret: Buffer.from(message.secret, 'base64') } : {};
    return { poll: { name: message.question, values: message.options, selectableCount: message.multiple ? 0 : 1, ...messageSecret } };
  }
  if (message.kind === 'status') {
    if (!message.media) return { text: message.text ?? '' };
    return mediaContent(message.media);
  }
  // A path, not a Buffer: Baileys streams the file while encrypting instead of loading it whole.
  if (message.as === 'voice') return { audio: { url: message.path }, ptt: true, mimetype: message.mimetype };
  if (message.as === 'sticker') return { sticker: { url: message.path }, mimetype: message.mimetype };
  if (message.as === 'video-note') return { video: { url: message.path }, ptv: true, mimetype: message.mimetype };
  return mediaContent(message);
}

/** A media file as Baileys' content: a path, not a Buffer (Baileys streams it while encrypting). */
function mediaContent(message: Pick<OutgoingMedia, 'mediaType' | 'path' | 'mimetype' | 'fileName' | 'caption'>): AnyMessageContent {
  const media = { url: message.path };
  const { mimetype, caption, fileName } = message;
  switch (message.mediaType) {
    case 'image':
      return caption === undefined ? { image: media, mimetype } : { image: media, mimetype, caption };
    case 'video':
      return caption === undefined ? { video: media, mimetype } : { video: media, mimetype, caption };
    case 'audio':
      // WhatsApp audio messages have no caption field.
      return { audio: media, mimetype };
    case 'document':
      return caption === undefined ? { document: media, mimetype, fileName } : { document: media, mimetype, fileName, caption };
  }
}

/** The status code of a Baileys (Boom) error, read structurally: @hapi/boom is not our dependency. */
export function closeCode(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('output' in error)) return undefined;
  const output = (error as { output?: { statusCode?: unknown } }).output;
  return typeof output?.statusCode === 'number' ? output.statusCode : undefined;
}

/** Resolves with the promise's value, or undefined once `ms` passed; never rejects on timeout. */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Send options: a reply quotes the message by id, with its real content and author when the
 * connection still knows them (`known`): WhatsApp apps display the quote from the content the reply
 * carries and look the original up by id and author (in a group, the participant who wrote it; our
 * own messages are quoted as ours). Unknown (e.g. from before a restart), it is quoted by id alone
 * with an empty body, as from the chat's other side.
 */
export function sendOptions(message: Outgoing, known?: Quotable): MiscMessageGenerationOptions {
  // Baileys sets no limit on a media upload by default: a media host that stops answering would
  // hold the send (and its credit hold) forever. Past this the send fails before anything left.
  const base = { messageId: message.id, mediaUploadTimeoutMs: MEDIA_UPLOAD_TIMEOUT_MS };
  if (message.kind === 'status') {
    return {
      ...base,
      statusJidList: message.audience ?? [],
      ...(message.backgroundColor !== undefined ? { backgroundColor: message.backgroundColor } : {}),
      ...(message.font !== undefined ? { font: message.font } : {}),
    };
  }
  if (message.replyTo === undefined) return base;
  const key = { remoteJid: message.to, id: message.replyTo, fromMe: known?.fromMe ?? false, ...(known?.participant ? { participant: known.participant } : {}) };
  const quoted: WAMessage = { key, message: known?.message ?? { conversation: '' } };
  return { ...base, quoted };
}

/** Longest a media upload may take (16 MiB at about 300 kB/s). */
export const MEDIA_UPLOAD_TIMEOUT_MS = 60_000;

/** Why a socket closed, when Baileys says more than a generic close (DNS, refused, TLS). */
export function closeCause(error: unknown): string | null {
  if (!(error instanceof Error)) return null;
  const data = (error as { data?: unknown }).data;
  const inner = data instanceof Error ? data.message : typeof data === 'string' ? data : null;
  const text = inner ?? error.message;
  if (!text || /^(connection (closed|failure|lost|terminated)|stream errored out|restart required)$/i.test(text.trim())) return null;
  return text.split('\n')[0]!.slice(0, 200);
}

/** The key of a message an action is about. */
export function messageKey(ref: MessageRef): { remoteJid: string; id: string; fromMe: boolean; participant?: string } {
  return { remoteJid: ref.chatId, id: ref.messageId, fromMe: ref.fromMe, ...(ref.participant !== undefined ? { participant: ref.participant } : {}) };
}
