import type { Context, Next } from 'koa';
import { GatewayError } from '../domain/errors.js';

/** JSON bodies are small; 256 KiB leaves room for the longest WhatsApp text (65,536 chars). */
export const JSON_LIMIT = 256 * 1024;

/**
 * Reads a JSON body: 415 for another content type, charset or a compressed body, 413 past
 * JSON_LIMIT (declared or streamed), 400 INVALID_JSON when it does not parse. A lean reader rather
 * than co-body: it was 15 % of a send's CPU in profiles, and these bodies need no inflation or
 * charset conversion (multipart still goes through koa-body).
 */
export async function jsonBody(ctx: Context, next: Next): Promise<void> {
  await readJsonBody(ctx);
  await next();
}

/** Reads and parses the body into `ctx.request.body` (undefined when there is none). */
export async function readJsonBody(ctx: Context, limit = JSON_LIMIT): Promise<void> {
  const headers = ctx.req.headers;
  const declared = Number(headers['content-length'] || '0');
  const chunked = (headers['transfer-encoding'] ?? '') !== '';
  if (declared > 0 || chunked) {
    // The common exact type skips type-is and the charset pattern (about 1.5 % of a send's CPU in
    // the bench's profile); any other spelling takes the full checks.
    if (headers['content-type'] !== 'application/json') {
      if (!ctx.is('application/json')) throw new GatewayError('UNSUPPORTED_MEDIA_TYPE', 'send the body as application/json');
      const charset = /charset=([^;\s]+)/i.exec(ctx.get('content-type'))?.[1]?.toLowerCase().replace(/"/g, '');
      if (charset && charset !== 'utf-8' && charset !== 'utf8') throw new GatewayError('UNSUPPORTED_MEDIA_TYPE', 'JSON bodies must be UTF-8');
    }
    const encoding = (headers['content-encoding'] ?? '').toLowerCase();
    if (encoding && encoding !== 'identity') throw new GatewayError('UNSUPPORTED_MEDIA_TYPE', 'compressed request bodies are not accepted');
    if (declared > limit) {
      ctx.set('Connection', 'close');
      throw new GatewayError('PAYLOAD_TOO_LARGE', tooLarge(limit));
    }
    const text = await readLimited(ctx, limit);
    if (text.trim() !== '') {
      try {
        (ctx.request as { body?: unknown }).body = JSON.parse(text) as unknown;
      } catch {
        throw new GatewayError('INVALID_JSON', 'request body is not valid JSON');
      }
    }
  }
}

function tooLarge(limit: number): string {
  return limit === JSON_LIMIT ? 'JSON body is larger than 256 KiB' : `JSON body is larger than ${limit} bytes`;
}

function readLimited(ctx: Context, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = ctx.req;
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.resume(); // discard the rest; the answer closes the connection
        ctx.set('Connection', 'close');
        reject(new GatewayError('PAYLOAD_TOO_LARGE', tooLarge(limit)));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'));
    };
    const onError = (err: Error): void => {
      cleanup();
      reject(new GatewayError('INVALID_FIELD', `request body could not be read (${err.message})`));
    };
    const onAborted = (): void => {
      cleanup();
      reject(new GatewayError('INVALID_FIELD', 'request body was cut off'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}

/** Max characters of a text message (WhatsApp's own limit is 65,536). */
export const MAX_TEXT = 65_536;
