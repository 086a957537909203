/** Stable error codes of the REST contract and the HTTP status each one maps to. */
export const ERROR_STATUS = {
  MISSING_FIELD: 400,
  INVALID_FIELD: 400,
  INVALID_PHONE: 400,
  INVALID_JSON: 400,
  UNAUTHORIZED: 401,
  PREMIUM_REQUIRED: 403,
  QUOTA_EXHAUSTED: 403,
  NOT_FOUND: 404,
  QR_NOT_AVAILABLE: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  CONNECTION_NOT_READY: 503,
  INTERNAL: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** The one error type the HTTP layer renders; `code` is stable, `message` is for humans. */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Seconds, for 429 answers. */
  readonly retryAfter?: number;

  constructor(code: ErrorCode, message: string, options?: { retryAfter?: number; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    if (options?.retryAfter !== undefined) this.retryAfter = options.retryAfter;
  }
}

/** Raised by the CLI and start-up for problems the user must fix; printed as one line. */
export class UserError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.name = 'UserError';
    this.exitCode = exitCode;
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
