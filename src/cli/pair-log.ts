import { pino, type Logger } from 'pino';

const ERROR_LEVEL = 50;

/**
 * The logger of a `gateway pair` that runs the connection itself (no daemon). Its output shares
 * the terminal with the QR drawing, where a JSON log line tears the drawing apart and means
 * nothing to the person scanning: errors become one plain line through `note`, everything below
 * error is dropped (the status lines already say what happens, with the cause). Filtering here,
 * not by level alone, also catches children with a level of their own (Baileys' logger).
 */
export function pairLogger(note: (line: string) => void): Logger {
  const destination = {
    write(line: string): void {
      let entry: { level?: unknown; msg?: unknown; err?: { message?: unknown } };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        return;
      }
      if (typeof entry.level !== 'number' || entry.level < ERROR_LEVEL) return;
      const msg = typeof entry.msg === 'string' ? entry.msg : 'error';
      const err = typeof entry.err?.message === 'string' ? `: ${entry.err.message.split('\n')[0]}` : '';
      note(`gateway: ${msg}${err}`);
    },
  };
  return pino({ level: 'error', base: null, timestamp: false }, destination);
}
