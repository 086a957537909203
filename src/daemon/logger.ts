import { pino, type Logger } from 'pino';

/**
 * Structured JSON to stdout. Keys and secrets are redacted wherever they might appear. Lines are
 * written in batches (at most 4 KiB or 250 ms old) rather than one write(2) per request, and
 * flushed synchronously when the process exits.
 */
export function createLogger(level: string): Logger {
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  const timer = setInterval(() => {
    try {
      destination.flush();
    } catch {
      // A write already in flight; the next tick flushes.
    }
  }, 250);
  timer.unref();
  process.once('exit', () => {
    try {
      destination.flushSync();
    } catch {
      // stdout is gone; nothing left to do
    }
  });
  return pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ['apiKey', 'secret', 'serverSecret', 'webhook.secret', 'headers["x-api-key"]', 'headers["x-api-secret"]', '*.apiKey', '*.secret'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
