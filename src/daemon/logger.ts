import { pino, type Logger } from 'pino';

/** Structured JSON to stdout. Keys and secrets are redacted wherever they might appear. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['apiKey', 'secret', 'serverSecret', 'webhook.secret', 'headers["x-api-key"]', 'headers["x-api-secret"]', '*.apiKey', '*.secret'],
      censor: '[redacted]',
    },
  });
}
