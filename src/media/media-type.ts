import { fileTypeFromFile } from 'file-type';
import type { MediaType } from '../domain/types.js';

/** What WhatsApp shows inline; any other detected type goes as a document. */
const INLINE: Record<string, MediaType> = {
  'image/jpeg': 'image',
  'image/png': 'image',
  'image/webp': 'image',
  'image/gif': 'image',
  'video/mp4': 'video',
  'video/3gpp': 'video',
  'video/quicktime': 'video',
  'audio/ogg': 'audio',
  'audio/ogg; codecs=opus': 'audio',
  'audio/opus': 'audio',
  'audio/mpeg': 'audio',
  'audio/mp4': 'audio',
  'audio/aac': 'audio',
  'audio/amr': 'audio',
  'audio/x-m4a': 'audio',
  'audio/wav': 'audio',
  'audio/x-wav': 'audio',
};

export interface DetectedMedia {
  mediaType: MediaType;
  mimetype: string;
}

/**
 * Classifies an uploaded file by its content (magic bytes), not by the name or the type the client
 * claimed: a "photo.png" that holds a PDF is a document. Content with no recognisable signature
 * (plain text, CSV) is a document; its claimed type is kept only if it does not pretend to be media.
 */
export async function detectMedia(path: string, claimedType: string | null | undefined): Promise<DetectedMedia> {
  const detected = await fileTypeFromFile(path);
  if (detected) {
    return { mediaType: INLINE[detected.mime] ?? 'document', mimetype: detected.mime };
  }
  const claimed = (claimedType ?? '').toLowerCase();
  const safeClaim = /^(text\/[a-z0-9.+-]+|application\/(json|xml|csv|octet-stream))$/.test(claimed);
  return { mediaType: 'document', mimetype: safeClaim ? claimed : 'application/octet-stream' };
}
