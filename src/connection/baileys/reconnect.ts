/**
 * What to do when a Baileys socket closes: a pure function of the close code and a few counters,
 * so the policy is testable without sockets or timers. Codes are Baileys' `DisconnectReason`
 * values (`lastDisconnect.error.output.statusCode`), written out here so this file stays free of
 * Baileys imports.
 */

export const CLOSE_CODES = {
  loggedOut: 401,
  forbidden: 403,
  versionRefused: 405,
  timedOut: 408,
  multideviceMismatch: 411,
  connectionClosed: 428,
  connectionReplaced: 440,
  badSession: 500,
  unavailableService: 503,
  restartRequired: 515,
} as const;

export interface ReconnectSettings {
  /** Consecutive closes without reaching `open` after which we stop retrying. */
  maxReconnectAttempts: number;
  /** Unscanned QR codes after which pairing stops. */
  maxQrRefreshes: number;
  reconnectBaseMs: number;
  reconnectMaxMs: number;
}

export interface CloseContext {
  /** The close code, undefined when the socket ended without an error. */
  code: number | undefined;
  /** Closes since the socket last reached `open` (or since `start()`), this one included. */
  failures: number;
  /** QR codes shown since `start()` without a successful pairing. */
  qrShown: number;
  /** Whether the credentials hold a paired account. */
  paired: boolean;
  /** Set when the socket never reached WhatsApp (see unreachableCause): the cause, e.g. `getaddrinfo ENOTFOUND web.whatsapp.com`. */
  unreachable?: string | null;
  /** Set when the instance's proxy refused the socket (see proxyRefusedCause): what it said. */
  proxyRefused?: string | null;
}

export type CloseDecision =
  | { action: 'reconnect'; delayMs: number; clearCredentials: boolean; reason: string }
  | { action: 'stop'; clearCredentials: boolean; reason: string };

/** "Capped exponential backoff with equal jitter": never below half the step, so never a tight loop. */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const exponent = Math.max(0, attempt - 1);
  // 2 ** 30 already dwarfs any sane cap; clamping keeps the arithmetic finite.
  const step = Math.min(maxMs, baseMs * 2 ** Math.min(exponent, 30));
  const half = step / 2;
  return Math.round(half + random() * half);
}

/**
 * Error codes that mean the socket never reached WhatsApp: the name did not resolve, nothing
 * listens or there is no route, or TLS failed. Baileys maps all of these to 408 (or 500), the
 * code of a lost connection, so they are told apart from the socket's own error.
 */
const UNREACHABLE_CODES = new Set([
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NODATA',
  'EAI_NONAME',
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  'EPROTO',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'HOSTNAME_MISMATCH',
]);
const UNREACHABLE_PREFIXES = ['ERR_TLS_', 'ERR_SSL_', 'CERT_', 'UNABLE_TO_'];

function isUnreachableCode(code: string): boolean {
  return UNREACHABLE_CODES.has(code) || UNREACHABLE_PREFIXES.some((p) => code.startsWith(p));
}

/**
 * Why WhatsApp could not be reached at all, from a close error, or null when it is some other
 * close. Baileys wraps the WebSocket's own error in a Boom and keeps it as `data`.
 */
export function unreachableCause(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null;
  const data = (error as { data?: unknown }).data;
  for (const candidate of [data, error]) {
    if (!(candidate instanceof Error)) continue;
    const code = (candidate as NodeJS.ErrnoException).code;
    if (typeof code !== 'string' || !isUnreachableCode(code)) continue;
    const text = (candidate.message.split('\n')[0] ?? '').slice(0, 200);
    return text.includes(code) ? text : `${text || 'TLS failed'} (${code})`;
  }
  return null;
}

/** The `code` of an error the instance's proxy caused (proxy.ts marks them). */
export const PROXY_REFUSED = 'PROXY_REFUSED';

/**
 * What the instance's proxy said when it would not carry the socket (nothing listens there, 407,
 * SOCKS authentication failed), from a close error, or null when the proxy is not to blame.
 * Baileys keeps the WebSocket's own error as the Boom's `data`.
 */
export function proxyRefusedCause(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null;
  for (const candidate of [(error as { data?: unknown }).data, error]) {
    if (candidate instanceof Error && (candidate as NodeJS.ErrnoException).code === PROXY_REFUSED) return (candidate.message.split('\n')[0] ?? '').slice(0, 200) || 'no answer';
  }
  return null;
}

function describe(code: number | undefined, unreachable?: string | null, proxyRefused?: string | null): string {
  if (proxyRefused) return `proxy refused: ${proxyRefused}`;
  if (unreachable) return `WhatsApp cannot be reached (${unreachable})`;
  return code === undefined ? 'connection closed' : `connection closed (${code})`;
}

/**
 * The reason a connection shows while a retry is pending: what happened, then which retry comes
 * and when (`; retry 2 of 20 in 4 s`). `gateway pair` prints each one.
 */
export function retryingReason(decision: { reason: string; delayMs: number }, cause: string | null, failures: number, settings: Pick<ReconnectSettings, 'maxReconnectAttempts'>): string {
  const seconds = Math.max(1, Math.round(decision.delayMs / 1000));
  const when = decision.delayMs === 0 ? 'now' : `in ${seconds} s`;
  return `${decision.reason}${cause ? ` (${cause})` : ''}; retry ${failures} of ${settings.maxReconnectAttempts} ${when}`;
}

export function decideOnClose(ctx: CloseContext, settings: ReconnectSettings, random: () => number = Math.random): CloseDecision {
  const { code, failures } = ctx;

  switch (code) {
    case CLOSE_CODES.forbidden:
      return {
        action: 'stop',
        clearCredentials: false,
        reason: 'WhatsApp refused this account (403 forbidden; often a ban): not reconnecting',
      };
    case CLOSE_CODES.versionRefused:
      return {
        action: 'stop',
        clearCredentials: false,
        reason: 'WhatsApp refused the WA Web version (405): set baileys.version in config to a current one',
      };
    case CLOSE_CODES.connectionReplaced:
      // Reconnecting would kick the other client, which would kick us back: a ban-worthy loop.
      return {
        action: 'stop',
        clearCredentials: false,
        reason: 'connection replaced (440): another client is using this session; not reconnecting until started again',
      };
    default:
      break;
  }

  const loggedOut = code === CLOSE_CODES.loggedOut || code === CLOSE_CODES.multideviceMismatch;

  if (!loggedOut && !ctx.paired && ctx.qrShown >= settings.maxQrRefreshes) {
    return { action: 'stop', clearCredentials: false, reason: `QR not scanned (${ctx.qrShown} codes shown)` };
  }

  if (failures > settings.maxReconnectAttempts) {
    return {
      action: 'stop',
      clearCredentials: loggedOut,
      reason: `gave up after ${settings.maxReconnectAttempts} failed reconnects (last: ${describe(code, ctx.unreachable, ctx.proxyRefused)})`,
    };
  }

  if (loggedOut) {
    // Fresh credentials then a QR: delayed like any failure so a server that keeps answering 401
    // cannot spin us, and counted so it ends at the cap.
    return {
      action: 'reconnect',
      delayMs: backoffDelay(failures, settings.reconnectBaseMs, settings.reconnectMaxMs, random),
      clearCredentials: true,
      reason: code === CLOSE_CODES.loggedOut ? 'logged out (401): pairing again' : 'device link invalid (411): pairing again',
    };
  }

  if (code === CLOSE_CODES.restartRequired && failures <= 1) {
    // The normal step right after a scan; only the first in a row is free.
    return { action: 'reconnect', delayMs: 0, clearCredentials: false, reason: 'restart required (515)' };
  }

  const delayMs = backoffDelay(failures, settings.reconnectBaseMs, settings.reconnectMaxMs, random);
  return { action: 'reconnect', delayMs, clearCredentials: false, reason: describe(code, ctx.unreachable, ctx.proxyRefused) };
}
