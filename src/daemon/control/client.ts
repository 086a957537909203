import { createConnection, type Socket } from 'node:net';
import { MAX_REPLY_BYTES, encodeLine, parseReply, type PairReply, type PairRequest } from './protocol.js';

export interface ControlStream {
  /** Resolves when the daemon closed the stream (or close() was called). */
  readonly closed: Promise<void>;
  close(): void;
}

/** Nothing answers on the control socket (`errno` says why: ENOENT, ECONNREFUSED, EACCES...). */
export class ControlUnavailableError extends Error {
  constructor(
    readonly socketPath: string,
    readonly errno: string,
  ) {
    super(`the control socket ${socketPath} does not answer (${errno})`);
    this.name = 'ControlUnavailableError';
  }
}

function connectOnce(socketPath: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(socketPath);
    const onError = (err: NodeJS.ErrnoException): void => {
      socket.destroy();
      reject(new ControlUnavailableError(socketPath, err.code ?? err.message));
    };
    socket.once('error', onError);
    socket.once('connect', () => {
      socket.off('error', onError);
      resolve(socket);
    });
  });
}

/**
 * Connects to a daemon's control socket, sends one request and hands every reply line to
 * `onReply`. A daemon that is still starting has its lock before its socket, so refusals are
 * retried for `waitMs`.
 */
export async function openControlStream(socketPath: string, request: PairRequest, onReply: (reply: PairReply) => void, waitMs = 5_000): Promise<ControlStream> {
  const until = Date.now() + waitMs;
  let socket: Socket;
  for (;;) {
    try {
      socket = await connectOnce(socketPath);
      break;
    } catch (err) {
      const retryable = err instanceof ControlUnavailableError && (err.errno === 'ENOENT' || err.errno === 'ECONNREFUSED');
      if (!retryable || Date.now() >= until) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => undefined); // 'close' follows and is what callers wait for
  let buffered = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buffered += chunk;
    let newline: number;
    while ((newline = buffered.indexOf('\n')) !== -1) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      const reply = parseReply(line);
      if (reply) onReply(reply);
    }
    if (buffered.length > MAX_REPLY_BYTES) socket.destroy();
  });
  socket.write(encodeLine(request));
  return { closed, close: () => socket.destroy() };
}
