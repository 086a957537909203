import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';
import { GatewayError } from '../domain/errors.js';
import type { ControlRequests } from './control-requests.js';
import { setBody } from './response-body.js';

/**
 * Writes the DESIGN.md error body. 5xx messages not written for clients are replaced, except on
 * the control socket: its only client is our own CLI (the data dir's owner), which shows the real
 * code and message and exits with the code's exit status (STORE_CORRUPT: 3).
 */
export function renderError(ctx: Context, err: GatewayError, control?: ControlRequests): void {
  ctx.status = err.status;
  if (err.retryAfter !== undefined) ctx.set('Retry-After', String(err.retryAfter));
  setBody(ctx, errorBody(err, control?.has(ctx.req) ?? false));
}

/** The DESIGN.md error body of `err` for a client (`trusted`: the local CLI, which sees every message). */
export function errorBody(err: GatewayError, trusted: boolean): { success: false; error: { code: string; message: string } & Readonly<Record<string, string>> } {
  const expose = err.expose || trusted;
  const message = !expose ? 'internal error' : trusted ? err.message : (err.publicMessage ?? (err.code === 'STORE_CORRUPT' ? 'stored data is corrupt and was left untouched; the daemon log names the file' : err.message));
  return { success: false, error: { code: expose ? err.code : 'INTERNAL', message, ...(expose ? err.detail : undefined) } };
}

/** Maps errors thrown by body parsers (formidable, raw-body) to contract codes. */
function fromParserError(err: unknown): GatewayError | null {
  if (typeof err !== 'object' || err === null) return null;
  const e = err as { status?: number; statusCode?: number; httpCode?: number; type?: string; message?: string };
  const status = e.status ?? e.statusCode ?? e.httpCode;
  if (e.type === 'entity.parse.failed') return new GatewayError('INVALID_JSON', 'request body is not valid JSON');
  if (status === 413 || e.type === 'entity.too.large') return new GatewayError('PAYLOAD_TOO_LARGE', 'request body is too large');
  if (status === 415 || e.type === 'encoding.unsupported' || e.type === 'charset.unsupported') {
    return new GatewayError('UNSUPPORTED_MEDIA_TYPE', 'unsupported content encoding or charset');
  }
  if (status === 400 || e.type === 'request.aborted' || e.type === 'request.size.invalid') {
    return new GatewayError('INVALID_FIELD', 'malformed request body');
  }
  return null;
}

/**
 * Renders every failure as the contract's error body: GatewayErrors by their code, parser errors
 * mapped to their 4xx, anything else a logged 500 with no detail for the client.
 */
export function errorMiddleware(logger: Logger, control?: ControlRequests): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new GatewayError('NOT_FOUND', `no route for ${ctx.method} ${ctx.path.slice(0, 100)}`);
      }
      if (ctx.status === 405 && ctx.body === undefined) {
        throw new GatewayError('NOT_FOUND', `method ${ctx.method} not allowed here`);
      }
    } catch (err) {
      const known = err instanceof GatewayError ? err : fromParserError(err);
      if (known) {
        if (!known.expose) logger.error({ err: known, method: ctx.method, path: ctx.path.slice(0, 200) }, 'request failed');
        renderError(ctx, known, control);
        return;
      }
      logger.error({ err, method: ctx.method, path: ctx.path.slice(0, 200) }, 'unhandled error');
      renderError(ctx, new GatewayError('INTERNAL', 'internal error'), control);
    }
  };
}
