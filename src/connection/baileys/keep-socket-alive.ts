import { DisconnectReason, S_WHATSAPP_NET, type BinaryNode } from '@whiskeysockets/baileys';
import type { Logger } from 'pino';
import { errorMessage } from '../../domain/errors.js';
import type { KeepaliveClock } from './keepalive-clock.js';
import type { SocketLike } from './options.js';

/** Baileys' margin before a silent server counts as lost (fixed in its socket.js). */
const LOST_AFTER_MS = 5_000;

/** What Baileys ends a silent socket with: a Boom of 408, read by its status code (outgoing.ts closeCode). */
function connectionLost(): Error {
  return Object.assign(new Error('Connection was lost'), { output: { statusCode: DisconnectReason.connectionLost } });
}

/**
 * Keeps one Baileys socket (made with keepAliveIntervalMs = KEEPALIVE_OFF_MS) alive on `clock`.
 * Armed by the first stanza after the handshake (when Baileys would start its own timer); stopped
 * by the returned function, which the caller runs when the socket closes, or by the beat itself
 * once the WebSocket is closed. A socket without a WebSocket client to watch (a test double of the
 * socket) is not kept alive.
 */
export function keepSocketAlive(sock: SocketLike, clock: KeepaliveClock, intervalMs: number, log: Logger, lostAfterMs: number = LOST_AFTER_MS): () => void {
  const ws = sock.ws;
  if (!ws?.on || !ws.off || !sock.sendNode || !sock.generateMessageTag) return () => undefined;
  const sendNode = sock.sendNode;
  const tag = sock.generateMessageTag;
  let lastReceived = Date.now();
  let stopBeat: (() => void) | null = null;
  const beat = (): void => {
    if (ws.isClosed || ws.isClosing) {
      stop();
      return;
    }
    if (Date.now() - lastReceived > intervalMs + lostAfterMs) {
      stop();
      sock.end(connectionLost()).catch((err: unknown) => log.warn({ err: errorMessage(err) }, 'ending a silent socket failed'));
      return;
    }
    if (!ws.isOpen) return;
    const ping: BinaryNode = { tag: 'iq', attrs: { id: tag(), to: S_WHATSAPP_NET, type: 'get', xmlns: 'w:p' }, content: [{ tag: 'ping', attrs: {} }] };
    // Sent, not queried: its answer is only a frame that moves lastReceived, which is all the beat
    // reads (Baileys' own keepalive queries, but only logs the outcome: it too judges a socket by its
    // last frame received, and ends it after the same silence). A Baileys query would format
    // two stack traces for timeouts (promiseTimeout, waitForMessage), arm a 60 s timer it never
    // clears when the socket ends, and add and remove three listeners, for every ping: about a fifth
    // of the idle daemon's busy samples at 1,000 sessions (README, Performance).
    // A ping that cannot be written on an open socket is news; on one closing, it is not.
    sendNode(ping).catch((err: unknown) => (ws.isOpen ? log.warn({ err: errorMessage(err) }, 'keepalive ping failed') : log.debug({ err: errorMessage(err) }, 'keepalive ping ended with its socket')));
  };
  // Baileys emits every frame it receives as `frame`: the raw handshake as bytes, then decrypted stanzas.
  const onFrame = (frame: unknown): void => {
    if (frame instanceof Uint8Array) return;
    lastReceived = Date.now();
    stopBeat ??= clock.every(intervalMs, beat);
  };
  ws.on('frame', onFrame);
  const stop = (): void => {
    ws.off!('frame', onFrame);
    stopBeat?.();
  };
  return stop;
}
