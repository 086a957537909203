import type { ErrorCode } from '../domain/errors.js';
import type { ConnectionStatus } from '../domain/types.js';

/**
 * What `gateway pair` hears while pairing: newline-delimited JSON from the control route
 * `POST /control/instances/{id}/pair`, one reply per line, until connected or an error.
 */

export type PairReply =
  | { type: 'code'; code: string }
  | { type: 'status'; status: ConnectionStatus; reason: string | null }
  | { type: 'qr'; qr: string }
  | { type: 'error'; code: ErrorCode; message: string };

/** Longest reply line a client accepts (QR payloads are a few hundred bytes). */
export const MAX_REPLY_BYTES = 64 * 1024;

const STATUSES = new Set<string>(['initializing', 'qr_code_generated', 'connected', 'disconnected']);

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
      return { type: 'status', status: v.status as ConnectionStatus, reason: typeof v.reason === 'string' ? v.reason : null };
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
 * end. The Connection interface has no flag for it, so this reads the reasons the Baileys
 * connection gives (`... retrying in 4 s`, `logged out (401): pairing again`); a unit test pins
 * them against reconnect.ts so a rewording fails there. Anything else (QR cap, reconnect cap,
 * 403/405/440, `stopped`, no reason) means nobody will retry until start() is called again.
 */
export function retryPending(reason: string | null): boolean {
  if (reason === null) return false;
  return /, retrying\b|: pairing again\b| in \d+ s$/.test(reason);
}
