import type { ErrorCode } from '../../domain/errors.js';
import { isE164 } from '../../domain/phone.js';
import type { ConnectionStatus } from '../../domain/types.js';

/**
 * The control socket's protocol: newline-delimited JSON over DATA_DIR/control.sock. A client sends
 * one request line; the daemon answers with reply lines and closes when the exchange is over.
 */
export interface PairRequest {
  op: 'pair';
  instanceId: string;
  /** E.164; pairs by code instead of QR. */
  phone?: string;
}

export type PairReply =
  | { type: 'code'; code: string }
  | { type: 'status'; status: ConnectionStatus; reason: string | null }
  | { type: 'qr'; qr: string }
  | { type: 'error'; code: ErrorCode; message: string };

/** Longest request line the daemon reads; a pair request is well under 200 bytes. */
export const MAX_REQUEST_BYTES = 4096;
/** Longest reply line a client accepts (QR payloads are a few hundred bytes). */
export const MAX_REPLY_BYTES = 64 * 1024;

export type ParsedRequest = { ok: true; request: PairRequest } | { ok: false; code: ErrorCode; message: string };

const REQUEST_KEYS = new Set(['op', 'instanceId', 'phone']);

/** Validates one request line; every problem becomes an error reply, never a throw. */
export function parseRequest(line: string): ParsedRequest {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false, code: 'INVALID_JSON', message: 'the request is not valid JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, code: 'INVALID_JSON', message: 'the request must be a JSON object' };
  }
  const body = value as Record<string, unknown>;
  const unknown = Object.keys(body).find((k) => !REQUEST_KEYS.has(k));
  if (unknown !== undefined) return { ok: false, code: 'INVALID_FIELD', message: `${unknown.slice(0, 40)}: unknown field` };
  if (body.op !== 'pair') return { ok: false, code: 'INVALID_FIELD', message: 'op: expected "pair"' };
  if (typeof body.instanceId !== 'string' || body.instanceId === '') {
    return { ok: false, code: 'MISSING_FIELD', message: 'instanceId: expected a string' };
  }
  if (body.phone !== undefined && !isE164(body.phone)) {
    return { ok: false, code: 'INVALID_PHONE', message: 'phone: expected E.164, like +15551234567' };
  }
  const request: PairRequest = { op: 'pair', instanceId: body.instanceId };
  if (typeof body.phone === 'string') request.phone = body.phone;
  return { ok: true, request };
}

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
export function encodeLine(message: PairReply | PairRequest): string {
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
