import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type Router from '@koa/router';
import type { Context, Next } from 'koa';
import { koaBody } from 'koa-body';
import type { File } from 'formidable';
import { GatewayError } from '../../domain/errors.js';
import type { SendService } from '../../sending/send-service.js';
import type { InstanceState } from '../auth.js';
import { MAX_TEXT, bodyObject, jsonBody, requiredPhone, requiredString } from '../body.js';
import type { AppDeps } from '../deps.js';
import { detectMedia } from '../media.js';

type Auth = (ctx: Context, next: Next) => Promise<void>;

function firstField(fields: Record<string, unknown> | undefined, name: string): unknown {
  const v = fields?.[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Streams one multipart upload into a private temp dir (never whole into memory), runs `use`, and
 * always removes the dir, also when parsing or sending fails.
 */
async function withUpload(ctx: Context, maxBytes: number, use: (file: File, fields: Record<string, unknown>) => Promise<void>): Promise<void> {
  if (!ctx.is('multipart/form-data')) {
    throw new GatewayError('UNSUPPORTED_MEDIA_TYPE', 'send-media takes multipart/form-data with a "file" field');
  }
  const declared = Number(ctx.get('content-length') || '0');
  if (declared > maxBytes + 64 * 1024) throw new GatewayError('PAYLOAD_TOO_LARGE', `file is larger than media.maxBytes (${maxBytes} bytes)`);
  const dir = await mkdtemp(join(tmpdir(), 'gateway-upload-'));
  try {
    const parse = koaBody({
      multipart: true,
      json: false,
      urlencoded: false,
      text: false,
      patchNode: false,
      patchKoa: true,
      formidable: {
        uploadDir: dir,
        maxFileSize: maxBytes,
        maxTotalFileSize: maxBytes,
        maxFiles: 1,
        maxFields: 20,
        maxFieldsSize: 256 * 1024,
        allowEmptyFiles: false,
        keepExtensions: false,
      },
    });
    try {
      await parse(ctx, async () => undefined);
    } catch (err) {
      const e = err as { httpCode?: number; code?: number };
      // formidable's own codes first: it answers "too many files" with an HTTP 413 too.
      if (e.code === 1015) throw new GatewayError('INVALID_FIELD', 'send exactly one file, in the "file" field');
      if (e.code === 1010) throw new GatewayError('MISSING_FIELD', 'file is required (and must not be empty)');
      if (e.code === 1016 || e.code === 1009 || e.httpCode === 413) {
        throw new GatewayError('PAYLOAD_TOO_LARGE', `file is larger than media.maxBytes (${maxBytes} bytes)`);
      }
      throw new GatewayError('INVALID_FIELD', 'malformed multipart body');
    }
    const files = (ctx.request.files ?? {}) as Record<string, File | File[] | undefined>;
    const fileField = files.file;
    const file = Array.isArray(fileField) ? fileField[0] : fileField;
    const fields = (ctx.request.body ?? {}) as Record<string, unknown>;
    if (!file) throw new GatewayError('MISSING_FIELD', 'file is required');
    await use(file, fields);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export function messageRoutes(router: Router, deps: AppDeps, auth: Auth, sender: SendService): void {
  router.post('/api/:id/send', auth, jsonBody, async (ctx) => {
    const { instance } = ctx.state as InstanceState;
    const body = bodyObject(ctx);
    const phone = requiredPhone(body.phone);
    const message = requiredString(body, 'message', MAX_TEXT);
    const result = await sender.send(instance.id, { kind: 'text', phone, text: message });
    ctx.body = { success: true, instanceId: instance.id, messageId: result.messageId, quotaRemaining: result.quotaRemaining };
  });

  router.post('/api/:id/send-media', auth, async (ctx) => {
    const { instance } = ctx.state as InstanceState;
    await withUpload(ctx, deps.config.media.maxBytes, async (file, fields) => {
      const phone = requiredPhone(firstField(fields, 'phone'));
      const captionRaw = firstField(fields, 'caption');
      if (captionRaw !== undefined && typeof captionRaw !== 'string') throw new GatewayError('INVALID_FIELD', 'caption must be text');
      if (typeof captionRaw === 'string' && captionRaw.length > 4096) throw new GatewayError('INVALID_FIELD', 'caption must be at most 4096 characters');
      const media = await detectMedia(file.filepath, file.mimetype);
      const fileName = basename(file.originalFilename ?? 'file').slice(0, 200) || 'file';
      const result = await sender.send(instance.id, {
        kind: 'media',
        phone,
        mediaType: media.mediaType,
        mimetype: media.mimetype,
        path: file.filepath,
        fileName,
        ...(typeof captionRaw === 'string' && captionRaw !== '' ? { caption: captionRaw } : {}),
      });
      ctx.body = {
        success: true,
        instanceId: instance.id,
        messageId: result.messageId,
        quotaRemaining: result.quotaRemaining,
        mediaType: media.mediaType,
      };
    });
  });
}
