import { GatewayError } from '../../domain/errors.js';

/** Seconds a client is told to wait before it retries a request the database could not take. */
export const RETRY_AFTER_S = 2;

/** Socket errors of a database that cannot be reached or went away. */
const SOCKET_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED']);

/**
 * SQLSTATEs of a database that refuses work for now: class 08 (connection exception), 53 (too
 * many clients, out of memory or disk), 57P01-57P03 (shutdown, crash, starting up), and 40001 and
 * 40P01 (a serialization failure or a deadlock: the statement was undone, and is taken if retried;
 * a batch of a chat's new messages and the deletion of that chat can lock the same rows).
 */
function unavailableState(code: string): boolean {
  return code.startsWith('08') || code.startsWith('53') || code === '57P01' || code === '57P02' || code === '57P03' || code === '58030' || code === '40001' || code === '40P01';
}

/** Whether `err` says the database cannot be used now (rather than a bug or a refused value). */
export function isUnavailable(err: unknown): boolean {
  if (err instanceof GatewayError) return err.code === 'STORAGE_UNAVAILABLE';
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (SOCKET_ERRNOS.has(code) || unavailableState(code))) return true;
  // node-postgres reports a connection that ended under a query, or a pool that timed out
  // waiting for one, by message only.
  const message = (err as { message?: unknown }).message;
  return typeof message === 'string' && /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable/i.test(message);
}

/**
 * A failed database call as the gateway reports it: 503 STORAGE_UNAVAILABLE (with Retry-After)
 * when the database cannot be reached or refuses for now; anything else as it is.
 */
export function pgError(err: unknown, what: string): unknown {
  if (err instanceof GatewayError) return err;
  // The fencing trigger (migration 003): this node no longer holds the instance's lease.
  if ((err as { code?: unknown } | null)?.code === 'GW001') {
    return new GatewayError('INSTANCE_MOVING', `${what}: this node no longer holds the instance (it is moving to another node); nothing was changed, retry`, { cause: err, retryAfter: RETRY_AFTER_S });
  }
  if (!isUnavailable(err)) return err;
  const why = (err as { code?: unknown }).code ?? (err as Error).message;
  return new GatewayError('STORAGE_UNAVAILABLE', `${what}: the database is unavailable (${String(why)}); nothing was changed, retry later`, { cause: err, retryAfter: RETRY_AFTER_S });
}
