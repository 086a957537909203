import type { StatusChange } from '../connection/types.js';
import type { ErrorCode } from '../domain/errors.js';
import type { ConnectionStatus } from '../domain/types.js';

/**
 * What `gateway pair` hears while pairing: newline-delimited JSON from the control route
 * `POST /control/instances/{id}/pair`, one reply per line, until connected or an error.
 */

export type PairReply =
  | { type: 'code'; code: string }
  | ({ type: 'status'; status: ConnectionStatus; reason: string | null } & Pick<StatusChange, 'next' | 'unreachable'>)
  | { type: 'qr'; qr: string }
  | { type: 'error'; code: ErrorCode; message: string };

/** Longest reply line a client accepts (QR payloads are a few hundred bytes). */
export const MAX_REPLY_BYTES = 64 * 1024;

const STATUSES = new Set<string>(['initializing', 'qr_code_generated', 'connected', 'disconnected']);
const NEXT = new Set<string>(['retrying', 'gave-up', 'stopped']);

/** Reads one reply line from the daemon; null for anything this client does not understand. */
export function parseReply(line: string): PairReply | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  switch (v.type) {
    case 'code':
      return typeof v.code === 'string' ? { type: 'code', code: v.code } : null;
    case 'qr':
      return typeof v.qr === 'string' ? { type: 'qr', qr: v.qr } : null;
    case 'status':
      if (typeof v.status !== 'string' || !STATUSES.has(v.status)) return null;
      return {
        type: 'status',
        status: v.status as ConnectionStatus,
        reason: typeof v.reason === 'string' ? v.reason : null,
        ...(typeof v.next === 'string' && NEXT.has(v.next) ? { next: v.next as NonNullable<StatusChange['next']> } : {}),
        ...(typeof v.unreachable === 'string' ? { unreachable: v.unreachable } : {}),
      };
    case 'error':
      return {
        type: 'error',
        code: (typeof v.code === 'string' ? v.code : 'INTERNAL') as ErrorCode,
        message: typeof v.message === 'string' ? v.message : 'the daemon reported an error',
      };
    default:
      return null;
  }
}

/** One message as a protocol line. */
export function encodeLine(message: PairReply): string {
  return `${JSON.stringify(message)}\n`;
}

/**
 * Whether a `disconnected` status is a pause before the connection's own retry rather than the
 * end. Changes say so (`next`); the first reply of a session is the connection's current state,
 * which has only its reason, so this reads the reasons the Baileys connection gives
 * (`...; retry 2 of 20 in 4 s`, `...; retry 2 of 20: connecting`, `logged out (401): pairing
 * again`); a unit test pins them against reconnect.ts so a rewording fails there. Anything else
 * (QR cap, reconnect cap, 403/405/440, `stopped`, no reason) means nobody will retry until
 * start() is called again.
 */
export function retryPending(reason: string | null, next?: StatusChange['next']): boolean {
  if (next !== undefined) return next === 'retrying';
  if (reason === null) return false;
  // `, retrying` and `in N s` at the end: the wording of earlier versions (a daemon not yet restarted after an upgrade).
  return /; retry \d+ of \d+\b|: pairing again\b|, retrying\b| in \d+ s$/.test(reason);
}
