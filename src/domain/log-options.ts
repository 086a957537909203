import type { LoggerOptions } from 'pino';

/**
 * pino's isoTime, formatted once per millisecond: under load many lines share a millisecond, and
 * `new Date().toISOString()` per line was ~0.7 % of a send's CPU in the bench's profile.
 */
function isoTimeCached(): () => string {
  let ms = -1;
  let text = '';
  return () => {
    const now = Date.now();
    if (now !== ms) {
      ms = now;
      text = `,"time":"${new Date(now).toISOString()}"`;
    }
    return text;
  };
}

/**
 * The daemon's pino options: JSON lines with an ISO time and the process id, keys and secrets
 * redacted wherever they might appear. The daemon's logger (daemon/logger.ts) and the loggers of
 * its session threads (connection/threads/) use the same, so a line reads the same from either.
 */
export function logOptions(level: string): LoggerOptions {
  return {
    level,
    base: { pid: process.pid },
    timestamp: isoTimeCached(),
    redact: {
      paths: ['apiKey', 'secret', 'serverSecret', 'webhook.secret', 'webhook.headers', 'proxy', 'settings.proxy', 'headers.authorization', 'headers["x-api-key"]', 'headers["x-api-secret"]', '*.apiKey', '*.secret'],
      censor: '[redacted]',
    },
  };
}
