import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { GatewayError, UserError, type ErrorCode } from '../domain/errors.js';

/** Writes the DESIGN.md error body. */
export function renderError(ctx: Parameters<Middleware>[0], err: GatewayError): void {
  ctx.status = err.status;
  if (err.retryAfter !== undefined) ctx.set('Retry-After', String(err.retryAfter));
  ctx.body = { success: false, error: { code: err.code, message: err.message } };
}

/**
 * Store and rule errors shared with the CLI carry its exit codes; in a request they mean: 4, the
 * instance vanished (deleted by the CLI a moment ago), which the API reports like any unknown
 * instance; 2, a value the rules refuse. Anything else (a corrupt or locked store) is a 500.
 */
function fromUserError(err: unknown): GatewayError | null {
  if (!(err instanceof UserError)) return null;
  if (err.exitCode === 4) return new GatewayError('UNAUTHORIZED', 'missing or invalid X-API-Key for this instance');
  if (err.exitCode === 2) return new GatewayError('INVALID_FIELD', err.message);
  return null;
}

/** Maps errors thrown by body parsers (co-body, formidable) to contract codes. */
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
 * Renders every failure as the contract's error body: GatewayErrors as they are, parser errors
 * mapped to their 4xx, anything else a logged 500 with no detail for the client.
 */
export function errorMiddleware(logger: Logger): Middleware {
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
      const known = err instanceof GatewayError ? err : (fromUserError(err) ?? fromParserError(err));
      if (known) {
        renderError(ctx, known);
        return;
      }
      logger.error({ err, method: ctx.method, path: ctx.path.slice(0, 200) }, 'unhandled error');
      renderError(ctx, new GatewayError('INTERNAL' as ErrorCode, 'internal error'));
    }
  };
}
