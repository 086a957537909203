import type { ConnectionObserver } from '../connection/manager.js';
import type { Connection } from '../connection/types.js';
import { GatewayError, errorMessage, type ErrorCode } from '../domain/errors.js';
import type { PairReply } from './pair-protocol.js';

/** A connection plus a way to follow it: the daemon's manager, or `gateway pair`'s own hooks. */
export interface PairTarget {
  connection: Connection;
  observe(observer: ConnectionObserver): () => void;
}

export interface PairSession {
  /** Stops following the connection (the client left); the connection itself keeps running. */
  cancel(): void;
  /** Settles once the session ended: connected, an error was sent, or cancel(). */
  readonly done: Promise<void>;
}

function toErrorReply(err: unknown, fallback: ErrorCode): PairReply {
  if (err instanceof GatewayError) return { type: 'error', code: err.code, message: err.message };
  return { type: 'error', code: fallback, message: errorMessage(err) };
}

/**
 * Drives one connection towards pairing and reports it: start() it (so a connection that gave up
 * tries again), with a phone ask for a pairing code, then send the current state followed by every
 * status and QR change until the status is `connected`. `send` is called with each reply; `end`
 * once, when the session is over on its own.
 */
export function runPairSession(target: PairTarget, phone: string | undefined, send: (reply: PairReply) => void, end: () => void): PairSession {
  const { connection } = target;
  let over = false;
  let unsubscribe: (() => void) | null = null;
  let settle: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (settle = resolve));

  const finish = (byClient: boolean): void => {
    if (over) return;
    over = true;
    unsubscribe?.();
    unsubscribe = null;
    if (!byClient) end();
    settle();
  };

  const follow = (): void => {
    if (over) return;
    // Snapshot and subscription in the same tick, so no change falls between them.
    send({ type: 'status', status: connection.status, reason: connection.reason });
    if (connection.status === 'connected') return finish(false);
    const qr = connection.qr;
    if (connection.status === 'qr_code_generated' && qr !== null) send({ type: 'qr', qr });
    unsubscribe = target.observe((event) => {
      if (over) return;
      if (event.type === 'qr') {
        send({ type: 'qr', qr: event.qr });
        return;
      }
      const { to, reason, next, unreachable } = event.change;
      send({ type: 'status', status: to, reason: reason ?? null, ...(next !== undefined ? { next } : {}), ...(unreachable !== undefined ? { unreachable } : {}) });
      if (event.change.to === 'connected') finish(false);
    });
  };

  const run = async (): Promise<void> => {
    try {
      connection.start();
    } catch (err) {
      send(toErrorReply(err, 'CONNECTION_NOT_READY'));
      return finish(false);
    }
    if (phone !== undefined) {
      if (!connection.requestPairingCode) {
        send({ type: 'error', code: 'INVALID_FIELD', message: 'phone: pairing by code needs a WhatsApp instance; this one pairs by QR only' });
        return finish(false);
      }
      let code: string;
      try {
        code = await connection.requestPairingCode(phone);
      } catch (err) {
        if (!over) send(toErrorReply(err, 'CONNECTION_NOT_READY'));
        return finish(false);
      }
      if (over) return;
      send({ type: 'code', code });
    }
    follow();
  };

  run().catch((err: unknown) => {
    if (!over) send(toErrorReply(err, 'INTERNAL'));
    finish(false);
  });
  return { cancel: () => finish(true), done };
}
