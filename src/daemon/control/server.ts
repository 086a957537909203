import { chmod, lstat, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import type { Logger } from 'pino';
import type { ConnectionManager } from '../../connection/manager.js';
import { errorMessage } from '../../domain/errors.js';
import { isInstanceId } from '../../store/paths.js';
import { MAX_REQUEST_BYTES, encodeLine, parseRequest, type PairReply, type PairRequest } from './protocol.js';
import { runPairSession, type PairSession } from './session.js';

export interface ControlServerOptions {
  socketPath: string;
  manager: Pick<ConnectionManager, 'get' | 'observe'>;
  /** Whether the instance store changed on disk since it was loaded (a CLI just created one). */
  changedOnDisk: () => boolean;
  /** Re-reads the store and starts connections for new instances. */
  reload: () => Promise<void>;
  logger: Logger;
  /** Clients served at once (default 16); more get an error reply. */
  maxClients?: number;
  /** How long a client may take to send its request line (default 10 s). */
  requestTimeoutMs?: number;
}

/** Unread replies a client may leave queued before it is dropped: a stuck reader costs no memory. */
const MAX_QUEUED_BYTES = 1024 * 1024;
/** How long an answered client may keep its end open before it is cut off. */
const LINGER_MS = 5_000;

/** Sends the last bytes and closes; a peer that never reads or hangs up is dropped after LINGER_MS. */
function finish(socket: Socket, last?: string): void {
  if (last === undefined) socket.end();
  else socket.end(last);
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

/**
 * The daemon's local control socket (DATA_DIR/control.sock, mode 0600). One request per client
 * connection; replies are streamed as lines. Nothing a client sends can throw out of here.
 */
export class ControlServer {
  private server: Server | null = null;
  /** Every accepted socket, so close() never waits on a peer that does not hang up. */
  private readonly sockets = new Set<Socket>();
  /** Sockets with a request being served; counted against maxClients. */
  private readonly clients = new Set<Socket>();
  private readonly log: Logger;

  constructor(private readonly options: ControlServerOptions) {
    this.log = options.logger;
  }

  async listen(): Promise<void> {
    const path = this.options.socketPath;
    await removeStaleSocket(path);
    const server = createServer((socket) => this.accept(socket));
    server.on('error', (err) => this.log.error({ err }, 'control socket error'));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    // The data dir is 0700 already; the socket itself is as private as the credentials next to it.
    await chmod(path, 0o600);
  }

  /** Stops listening, drops every client and removes the socket file. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
    await rm(this.options.socketPath, { force: true });
  }

  private accept(socket: Socket): void {
    socket.on('error', (err) => this.log.debug({ err }, 'control client error'));
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    if (this.clients.size >= (this.options.maxClients ?? 16)) {
      finish(socket, encodeLine({ type: 'error', code: 'RATE_LIMITED', message: 'too many control clients; try again later' }));
      return;
    }
    this.clients.add(socket);

    let buffered = Buffer.alloc(0);
    let handled = false;
    let session: PairSession | null = null;
    let closed = false;
    const timer = setTimeout(() => {
      handled = true;
      reply({ type: 'error', code: 'INVALID_FIELD', message: 'no request received in time' }, true);
    }, this.options.requestTimeoutMs ?? 10_000);
    timer.unref();

    const reply = (message: PairReply, last = false): void => {
      if (closed) return;
      if (socket.writableLength > MAX_QUEUED_BYTES) {
        socket.destroy();
        return;
      }
      if (last) finish(socket, encodeLine(message));
      else socket.write(encodeLine(message));
    };
    socket.on('close', () => {
      closed = true;
      clearTimeout(timer);
      this.clients.delete(socket);
      session?.cancel();
    });
    socket.on('data', (chunk: Buffer) => {
      // One request per connection: later bytes are read (so a hang-up is noticed) and dropped.
      if (handled) return;
      buffered = Buffer.concat([buffered, chunk]);
      const newline = buffered.indexOf(0x0a);
      if (newline === -1) {
        if (buffered.length > MAX_REQUEST_BYTES) {
          handled = true;
          clearTimeout(timer);
          reply({ type: 'error', code: 'PAYLOAD_TOO_LARGE', message: `the request line is over ${MAX_REQUEST_BYTES} bytes` }, true);
        }
        return;
      }
      handled = true;
      clearTimeout(timer);
      const line = buffered.subarray(0, Math.min(newline, MAX_REQUEST_BYTES + 1)).toString('utf8');
      buffered = Buffer.alloc(0);
      if (newline > MAX_REQUEST_BYTES) {
        reply({ type: 'error', code: 'PAYLOAD_TOO_LARGE', message: `the request line is over ${MAX_REQUEST_BYTES} bytes` }, true);
        return;
      }
      const parsed = parseRequest(line);
      if (!parsed.ok) {
        reply({ type: 'error', code: parsed.code, message: parsed.message }, true);
        return;
      }
      this.startPairing(parsed.request, reply, () => finish(socket))
        .then((s) => {
          if (closed) s?.cancel();
          else session = s;
        })
        .catch((err: unknown) => {
          this.log.error({ err }, 'control request failed');
          reply({ type: 'error', code: 'INTERNAL', message: 'the daemon could not handle the request' }, true);
        });
    });
  }

  private async startPairing(request: PairRequest, reply: (message: PairReply, last?: boolean) => void, end: () => void): Promise<PairSession | null> {
    const id = request.instanceId;
    let entry = isInstanceId(id) ? this.options.manager.get(id) : undefined;
    if (!entry && isInstanceId(id) && this.options.changedOnDisk()) {
      // Created by the CLI a moment ago: the store watcher may not have caught up yet.
      try {
        await this.options.reload();
      } catch (err) {
        this.log.warn({ err: errorMessage(err) }, 'reloading instances for a pair request failed');
      }
      entry = this.options.manager.get(id);
    }
    if (!entry) {
      reply({ type: 'error', code: 'NOT_FOUND', message: `no instance with id ${JSON.stringify(id.slice(0, 80))}` }, true);
      return null;
    }
    this.log.info({ instanceId: id, byCode: request.phone !== undefined }, 'pairing requested over the control socket');
    const target = { connection: entry.connection, observe: (observer: Parameters<ConnectionManager['observe']>[1]) => this.options.manager.observe(id, observer) };
    return runPairSession(target, request.phone, (message) => reply(message, message.type === 'error'), end);
  }
}

/** A socket file left by a daemon that was killed; anything that is not a socket stays. */
async function removeStaleSocket(path: string): Promise<void> {
  let isSocket = false;
  try {
    isSocket = (await lstat(path)).isSocket();
  } catch {
    return;
  }
  if (!isSocket) throw new Error(`${path} exists and is not a socket; remove it`);
  await rm(path, { force: true });
}
