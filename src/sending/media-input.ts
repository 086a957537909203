import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { Context } from 'koa';
import type { GatewayConfig } from '../config/schema.js';
import type { MediaPresentation, OutgoingMedia } from '../connection/types.js';
import { GatewayError } from '../domain/errors.js';
import { readJsonBody } from '../http/json-body.js';
import { withUpload } from '../http/upload.js';
import { detectMedia } from '../media/media-type.js';
import { fetchMedia } from '../media/remote-media.js';
import { VOICE_MIMETYPE, convertToVoice } from '../media/voice.js';

/** `as` of send-media: how the file shows. */
export type MediaAs = 'auto' | 'document' | 'voice' | 'sticker' | 'video-note';

/** A media file ready to send: typed by content, converted where `as` needs it. */
export type PreparedMedia = Pick<OutgoingMedia, 'mediaType' | 'mimetype' | 'path' | 'fileName'> & { as?: MediaPresentation };

export interface MediaConfig {
  media: Pick<GatewayConfig['media'], 'maxBytes' | 'fetchTimeoutMs' | 'ffmpegPath'>;
  webhooks: Pick<GatewayConfig['webhooks'], 'allowPrivateTargets'>;
}

/**
 * Types a file by its content and applies `as`: `document` sends any file as a document;
 * `voice` needs Opus in Ogg, or any other audio, which ffmpeg converts (415 without ffmpeg or for
 * what is not audio); `sticker` needs image/webp; `video-note` a video (sent as a round video).
 */
export async function prepareMedia(file: { path: string; claimedType: string | null; fileName: string | null }, as: MediaAs, config: MediaConfig): Promise<PreparedMedia> {
  const detected = await detectMedia(file.path, file.claimedType);
  const fileName = basename(file.fileName ?? 'file').slice(0, 200) || 'file';
  const base = { path: file.path, fileName, mimetype: detected.mimetype };
  switch (as) {
    case 'auto':
      return { ...base, mediaType: detected.mediaType };
    case 'document':
      return { ...base, mediaType: 'document' };
    case 'sticker':
      if (detected.mimetype !== 'image/webp') throw new GatewayError('UNSUPPORTED_MEDIA_TYPE', `a sticker is image/webp; this file is ${detected.mimetype}`);
      return { ...base, mediaType: 'image', as: 'sticker' };
    case 'video-note':
      if (detected.mediaType !== 'video') throw new GatewayError('UNSUPPORTED_MEDIA_TYPE', `a video note is a video (video/mp4); this file is ${detected.mimetype}`);
      return { ...base, mediaType: 'video', as: 'video-note' };
    case 'voice': {
      if (detected.mimetype === VOICE_MIMETYPE) return { ...base, mimetype: VOICE_MIMETYPE, mediaType: 'audio', as: 'voice' };
      if (detected.mediaType !== 'audio' && !detected.mimetype.startsWith('audio/')) {
        throw new GatewayError('UNSUPPORTED_MEDIA_TYPE', `a voice note is audio (${VOICE_MIMETYPE}, or any audio ffmpeg converts); this file is ${detected.mimetype}`);
      }
      const converted = `${file.path}.voice.ogg`;
      await convertToVoice(file.path, converted, config.media.ffmpegPath, detected.mimetype);
      return { path: converted, fileName: fileName.replace(/\.[A-Za-z0-9]{1,5}$/, '') + '.ogg', mimetype: VOICE_MIMETYPE, mediaType: 'audio', as: 'voice' };
    }
  }
}

/** The JSON form of a media body: exactly one of `url` or `base64`, with the file's claims. */
export interface MediaJson {
  url?: string | undefined;
  base64?: string | undefined;
  mimetype?: string | undefined;
  fileName?: string | undefined;
}

/** Base64 text decodes to 3/4 of its length; the JSON around it is small. */
export function base64BodyLimit(maxBytes: number): number {
  return Math.ceil((maxBytes * 4) / 3) + 64 * 1024;
}

/**
 * Reads a media body, multipart (a `file`) or JSON (`url`, fetched under the SSRF rules, or
 * `base64`), into a private temp file, and runs `use` with it and the other fields; the temp dir
 * is always removed. `parse` checks the fields (before anything is fetched).
 */
export async function withMediaBody<F extends MediaJson, T>(
  ctx: Context,
  config: MediaConfig,
  parse: (raw: unknown) => F,
  use: (file: { path: string; claimedType: string | null; fileName: string | null } | null, fields: F) => Promise<T>,
  /** Multipart fields that are lists (repeated, one item each). */
  lists: readonly string[] = [],
): Promise<T> {
  const max = config.media.maxBytes;
  if (ctx.is('multipart/form-data')) {
    return withUpload(ctx, max, async (file, raw) => {
      const fields = parse(raw);
      if (fields.url !== undefined || fields.base64 !== undefined) throw new GatewayError('INVALID_FIELD', 'a multipart body carries the file itself; url and base64 are for JSON bodies');
      return use(file ? { path: file.filepath, claimedType: file.mimetype ?? null, fileName: file.originalFilename ?? null } : null, fields);
    }, lists);
  }
  await readJsonBody(ctx, base64BodyLimit(max));
  return withMediaJson(config, parse(ctx.request.body ?? {}), use);
}

/**
 * The JSON form of a media body, already checked: the file from `url` (fetched under the SSRF
 * rules) or `base64` into a private temp dir, always removed; `use` gets null for neither.
 */
export async function withMediaJson<F extends MediaJson, T>(
  config: MediaConfig,
  fields: F,
  use: (file: { path: string; claimedType: string | null; fileName: string | null } | null, fields: F) => Promise<T>,
): Promise<T> {
  const max = config.media.maxBytes;
  if (fields.url !== undefined && fields.base64 !== undefined) throw new GatewayError('INVALID_FIELD', 'give either url or base64, not both');
  if (fields.url === undefined && fields.base64 === undefined) return use(null, fields);
  const dir = await mkdtemp(join(tmpdir(), 'gateway-media-'));
  try {
    const path = join(dir, 'file');
    let claimedType = fields.mimetype ?? null;
    let fileName = fields.fileName ?? null;
    if (fields.url !== undefined) {
      const fetched = await fetchMedia(fields.url, path, { maxBytes: max, timeoutMs: config.media.fetchTimeoutMs, allowPrivate: config.webhooks.allowPrivateTargets });
      claimedType ??= fetched.contentType;
      fileName ??= fetched.fileName;
    } else {
      const bytes = decodeBase64(fields.base64!);
      if (bytes.length > max) throw new GatewayError('PAYLOAD_TOO_LARGE', `file is larger than media.maxBytes (${max} bytes)`);
      await writeFile(path, bytes, { mode: 0o600 });
    }
    return await use({ path, claimedType, fileName }, fields);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Standard or URL-safe base64, optionally a `data:` URL; 400 for anything else or nothing. */
function decodeBase64(text: string): Buffer {
  const data = /^data:[^,]*;base64,/i.exec(text) ? text.slice(text.indexOf(',') + 1) : text;
  const clean = data.replace(/\s+/g, '');
  if (clean === '' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(clean)) throw new GatewayError('INVALID_FIELD', 'base64: not base64 text');
  const bytes = Buffer.from(clean, 'base64');
  if (bytes.length === 0) throw new GatewayError('INVALID_FIELD', 'base64: the file is empty');
  return bytes;
}
