import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Context } from 'koa';
import type { File } from 'formidable';
import { GatewayError } from '../domain/errors.js';

/** Form fields besides the file, at most: more is a malformed or hostile request. */
export const MAX_FORM_FIELDS = 20;

/** formidable's error codes (FormidableError.js). */
const F = { maxFieldsSize: 1006, maxFields: 1007, totalFileSize: 1009, emptyFile: 1010, maxFiles: 1015, fileSize: 1016 } as const;

/**
 * The first value of each form field (a repeated field keeps its first value), but every value of
 * a `lists` field, as an array: OpenAPI's form encoding of an array is the field repeated.
 */
function firstValues(fields: Record<string, unknown>, lists: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) out[k] = lists.includes(k) ? (Array.isArray(v) ? v : [v]) : Array.isArray(v) ? v[0] : v;
  return out;
}

/**
 * Streams one multipart upload into a private temp dir (never whole into memory), runs `use` with
 * the file (if any) and the other fields, and always removes the dir, also when parsing or the use
 * fails.
 */
export async function withUpload<T>(
  ctx: Context,
  maxBytes: number,
  use: (file: File | undefined, fields: Record<string, unknown>) => Promise<T>,
  /** Fields that are lists: each repetition is one item. */
  lists: readonly string[] = [],
): Promise<T> {
  if (!ctx.is('multipart/form-data')) {
    throw new GatewayError('UNSUPPORTED_MEDIA_TYPE', 'send multipart/form-data with a "file" field');
  }
  const declared = Number(ctx.get('content-length') || '0');
  if (declared > maxBytes + 64 * 1024) throw new GatewayError('PAYLOAD_TOO_LARGE', `file is larger than media.maxBytes (${maxBytes} bytes)`);
  const dir = await mkdtemp(join(tmpdir(), 'gateway-upload-'));
  try {
    // Loaded on the first upload: koa-body (formidable) costs ~0.4 s of start-up for every CLI command otherwise.
    const { koaBody } = await import('koa-body');
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
        maxFields: MAX_FORM_FIELDS,
        maxFieldsSize: 256 * 1024,
        allowEmptyFiles: false,
        keepExtensions: false,
      },
    });
    try {
      await parse(ctx, async () => undefined);
    } catch (err) {
      const e = err as { httpCode?: number; code?: number };
      // formidable's own codes first: it answers several of these with an HTTP 413 too.
      if (e.code === F.maxFiles) throw new GatewayError('INVALID_FIELD', 'send exactly one file, in the "file" field');
      if (e.code === F.emptyFile) throw new GatewayError('MISSING_FIELD', 'file is required (and must not be empty)');
      if (e.code === F.maxFields) throw new GatewayError('INVALID_FIELD', `too many form fields (at most ${MAX_FORM_FIELDS})`);
      if (e.code === F.maxFieldsSize) throw new GatewayError('PAYLOAD_TOO_LARGE', 'form fields are larger than 256 KiB');
      if (e.code === F.fileSize || e.code === F.totalFileSize) throw new GatewayError('PAYLOAD_TOO_LARGE', `file is larger than media.maxBytes (${maxBytes} bytes)`);
      throw new GatewayError('INVALID_FIELD', 'malformed multipart body');
    }
    const files = (ctx.request.files ?? {}) as Record<string, File | File[] | undefined>;
    const others = Object.keys(files).filter((k) => k !== 'file');
    if (others.length > 0) throw new GatewayError('INVALID_FIELD', `unexpected file field ${JSON.stringify(others[0]!.slice(0, 40))}; send the file as "file"`);
    const fileField = files.file;
    const file = Array.isArray(fileField) ? fileField[0] : fileField;
    return await use(file, firstValues((ctx.request.body ?? {}) as Record<string, unknown>, lists));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
