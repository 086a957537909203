/**
 * The one error type of the gateway. Every failure a user can act on carries a stable string
 * `code`; one table maps each code to the HTTP status the API answers and to the exit code the CLI
 * ends with, so no boundary translates errors by hand.
 *
 * `expose`: whether the message may reach an HTTP client. 4xx messages always do; of the 5xx only
 * the ones written for clients (503s). Everything else is logged and answered with a generic text.
 */
export const ERROR_TABLE = {
  MISSING_FIELD: { status: 400, exit: 2, expose: true },
  INVALID_FIELD: { status: 400, exit: 2, expose: true },
  INVALID_PHONE: { status: 400, exit: 2, expose: true },
  INVALID_JSON: { status: 400, exit: 2, expose: true },
  /** send-media from a `url` the gateway could not fetch (refused address, redirect, size, timeout, HTTP error). */
  MEDIA_FETCH_FAILED: { status: 400, exit: 2, expose: true },
  /** A command line that does not parse (CLI only). */
  USAGE: { status: 400, exit: 2, expose: true },
  /** config.json is missing, not JSON or not valid. */
  CONFIG_INVALID: { status: 500, exit: 2, expose: false },
  UNAUTHORIZED: { status: 401, exit: 1, expose: true },
  PREMIUM_REQUIRED: { status: 403, exit: 1, expose: true },
  QUOTA_EXHAUSTED: { status: 403, exit: 1, expose: true },
  /** WhatsApp allows this only to a group admin (participants, invite link, settings of a locked group). */
  NOT_GROUP_ADMIN: { status: 403, exit: 1, expose: true },
  /** An instance key set the `proxy` setting, which only the server secret may unless `instances.tenantsMayProxy`. */
  PROXY_NOT_ALLOWED: { status: 403, exit: 1, expose: true },
  NOT_FOUND: { status: 404, exit: 4, expose: true },
  QR_NOT_AVAILABLE: { status: 409, exit: 1, expose: true },
  ALREADY_CONNECTED: { status: 409, exit: 1, expose: true },
  /** Labels (and other Business features) on a personal WhatsApp account. */
  NOT_BUSINESS: { status: 409, exit: 1, expose: true },
  /** A refund larger than the credits no send holds. */
  INSUFFICIENT_CREDITS: { status: 409, exit: 1, expose: true },
  /** A name that is taken (an operator's). */
  ALREADY_EXISTS: { status: 409, exit: 1, expose: true },
  /** The thing exists already (an initialised data dir, a running daemon); CLI only. */
  CONFLICT: { status: 409, exit: 1, expose: true },
  PAYLOAD_TOO_LARGE: { status: 413, exit: 2, expose: true },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, exit: 2, expose: true },
  RATE_LIMITED: { status: 429, exit: 1, expose: true },
  INTERNAL: { status: 500, exit: 1, expose: false },
  /**
   * Stored data that will not parse; it is never overwritten. Clients see the code and the
   * error's `publicMessage` (what is corrupt and what to do), never the file's path.
   */
  STORE_CORRUPT: { status: 500, exit: 3, expose: true },
  /** The data dir is held by another process (a daemon, `gateway pair`). */
  STORE_LOCKED: { status: 503, exit: 3, expose: false },
  /** This process lost its lock of the data dir (it stalled and another took over); nothing was written. */
  STORE_LOCK_LOST: { status: 503, exit: 3, expose: false },
  /** The disk refused a write (full, read-only, I/O error): nothing was sent or changed. */
  STORAGE_UNAVAILABLE: { status: 503, exit: 3, expose: true },
  CONNECTION_NOT_READY: { status: 503, exit: 1, expose: true },
  /** The instance is moving to another node (several hosts): retry after Retry-After; nothing was sent or charged. */
  INSTANCE_MOVING: { status: 503, exit: 1, expose: true },
  /**
   * Several hosts: the node that runs the instance took the request and lost its lease before it
   * answered. Whether it was carried out is unknown: look (GET /api/{id}/messages/{messageId}, the
   * chat, the webhook) before doing it again.
   */
  OWNER_NO_ANSWER: { status: 504, exit: 1, expose: true },
  /**
   * The message was sent (its messageId is in the error body) but its debit or record could not be
   * stored yet (a full disk): do not send it again. The debit is written once the disk takes it.
   */
  SENT_NOT_RECORDED: { status: 500, exit: 3, expose: true },
  /** The CLI could not reach a running daemon's control socket. */
  DAEMON_UNAVAILABLE: { status: 503, exit: 1, expose: true },
} as const satisfies Record<string, { status: number; exit: number; expose: boolean }>;

export type ErrorCode = keyof typeof ERROR_TABLE;

export const ERROR_CODES = Object.keys(ERROR_TABLE) as ErrorCode[];

/** Codes the REST API can answer with (the CLI-only ones are left out of the document). */
export const API_ERROR_CODES = ERROR_CODES.filter((c) => c !== 'USAGE' && c !== 'CONFIG_INVALID' && c !== 'DAEMON_UNAVAILABLE' && c !== 'STORE_LOCK_LOST' && c !== 'CONFLICT');

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_TABLE, value);
}

/** The one error type; `code` is stable, `message` is for humans. */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  /** Seconds, for 429 answers. */
  readonly retryAfter?: number;
  /** Extra fields for the error body (`node` of a flow validation error). */
  readonly detail?: Readonly<Record<string, string>>;
  /** What an HTTP client is told instead of `message` (which may name files for the log). */
  readonly publicMessage?: string;

  constructor(code: ErrorCode, message: string, options?: { retryAfter?: number; cause?: unknown; detail?: Record<string, string>; publicMessage?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    if (options?.retryAfter !== undefined) this.retryAfter = options.retryAfter;
    if (options?.detail !== undefined) this.detail = options.detail;
    if (options?.publicMessage !== undefined) this.publicMessage = options.publicMessage;
  }

  get status(): number {
    return ERROR_TABLE[this.code].status;
  }

  get exitCode(): number {
    return ERROR_TABLE[this.code].exit;
  }

  get expose(): boolean {
    return ERROR_TABLE[this.code].expose;
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Disk errors that mean "cannot store now" rather than a bug. */
const STORAGE_ERRNOS = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EIO', 'EMFILE', 'ENFILE']);

/** Wraps a failed write as STORAGE_UNAVAILABLE when the disk refused it; anything else as is. */
export function storageError(err: unknown, what: string): unknown {
  const errno = (err as NodeJS.ErrnoException | null)?.code;
  if (typeof errno === 'string' && STORAGE_ERRNOS.has(errno)) {
    return new GatewayError('STORAGE_UNAVAILABLE', `${what}: the disk refused the write (${errno}); nothing was changed`, { cause: err });
  }
  return err;
}
