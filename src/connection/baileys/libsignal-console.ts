import type { Logger } from 'pino';

/**
 * libsignal (Baileys' Signal implementation) reports through `console`, and some of its lines
 * carry whole session records: "Closing session:" prints the ratchet's private ephemeral key,
 * root key and chain keys, and Baileys closes sessions routinely (each usync refreshes the
 * sessions of the devices it returns). Under systemd, stdout is the journal: those keys would be
 * kept in plain text wherever the logs go.
 *
 * While a Baileys connection factory exists, console calls whose first argument is one of
 * libsignal's messages become one line of the gateway's log (component `libsignal`) with that
 * message only; every other argument (session records, keys, stacks) is dropped. Anything else
 * written to the console passes through untouched.
 */

/** libsignal's own console messages (libsignal/src/*.js), by the text they start with. */
export const LIBSIGNAL_ROUTINE: readonly string[] = ['Closing session:', 'Opening session:', 'Removing old closed session:', 'Migrating session to:', 'Session already closed', 'Session already open', 'Closing open session in favor of incoming prekey bundle', 'Decrypted message with closed session.'];
export const LIBSIGNAL_TROUBLE: readonly string[] = ['Failed to decrypt message with any known session', 'Session error:', 'V1 session storage migration error', 'WARNING: Expected pubkey of length 33', 'Unhandled bucket type'];
/** A message that carries text of its own ("Session error:" + the error) is cut here. */
const MAX_MESSAGE = 200;

type Method = 'log' | 'info' | 'warn' | 'error' | 'debug';
const METHODS: readonly Method[] = ['log', 'info', 'warn', 'error', 'debug'];

let sink: Logger | null = null;

function classify(first: unknown): 'routine' | 'trouble' | null {
  if (typeof first !== 'string') return null;
  if (LIBSIGNAL_ROUTINE.some((p) => first.startsWith(p))) return 'routine';
  if (LIBSIGNAL_TROUBLE.some((p) => first.startsWith(p))) return 'trouble';
  return null;
}

/**
 * Routes libsignal's console lines to `logger` (the newest caller's), from now on, in this process.
 * Installed once; later calls only change where the lines go.
 */
export function routeLibsignalConsole(logger: Logger): void {
  const first = sink === null;
  sink = logger.child({ component: 'libsignal' });
  if (!first) return;
  for (const method of METHODS) {
    const original = console[method].bind(console);
    console[method] = (...args: unknown[]): void => {
      const kind = classify(args[0]);
      if (kind === null || sink === null) return original(...args);
      const message = (args[0] as string).slice(0, MAX_MESSAGE);
      if (kind === 'routine') sink.debug(message);
      else sink.warn(message);
    };
  }
}
