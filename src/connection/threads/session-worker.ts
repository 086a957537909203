/**
 * A session thread: runs Baileys connections for the daemon, with a heap of their own (see
 * session-threads.ts for why). Everything that is not the WhatsApp socket stays in the daemon and is
 * asked across the port: the credentials store, the login gate, each instance's settings at connect,
 * and the hooks that store and publish what arrives. Log lines go to the daemon's log.
 */
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { pino } from 'pino';
import { logOptions } from '../../domain/log-options.js';
import type { Connection, ConnectionHooks, InboundMedia, MessageUpdate, StatusChange } from '../types.js';
import type { InstanceRecord } from '../../schemas/instance.js';
import type { BaileysOptions, ConnectSettings } from '../baileys/options.js';
import type { AuthStateRepository, StoredAuth } from '../../storage/ports/auth-state.js';
import type { AccountEvent } from '../../schemas/account-events.js';
import type { PollKey } from '../account-types.js';
import type { LabelUpdate } from '../contacts-types.js';
import type { InboundMessage } from '../../schemas/events.js';
import type { InboundExtra } from '../../storage/ports/messages.js';
import { Endpoint, type WireMessage } from './rpc.js';
import { isConnectionCall } from './calls.js';
import type { CallAnswer, RemoteMedia, RemoteState, SessionThreadData, WireSnapshot } from './wire-types.js';

const port = parentPort;
if (!port) throw new Error('session-worker.ts runs as a worker thread');
const data = workerData as SessionThreadData;
const daemon = new Endpoint(port);

// Below the daemon's own thread: when the cores are short, the API, the stores and the webhooks run
// first and the sessions wait (a thread's nice value; on Linux setpriority(0) is the calling
// thread's alone). Where the system refuses, the thread runs at the daemon's priority.
if (data.nice > 0) {
  try {
    setPriority(data.nice);
  } catch {
    // Not permitted here (a container without CAP_SYS_NICE can still lower its own priority; other systems may not).
  }
}

// The daemon's preloads first (in tests, the protocol double's certificate), then Baileys.
for (const url of data.preloads) await import(url);
const { createBaileysConnectionFactory } = await import('../baileys/connection.js');

const logger = pino(logOptions(data.logLevel), { write: (line: string) => daemon.note('log', [line]) });

const encoder = new TextEncoder();

/** The credentials store of the daemon, asked across the port. */
const auth: AuthStateRepository = {
  async read(instanceId, revive = (v) => v): Promise<StoredAuth | null> {
    const stored = await daemon.call<StoredAuth | null>('auth.read', [instanceId]);
    if (stored === null) return null;
    const keys: Record<string, unknown> = {};
    for (const [type, table] of Object.entries(stored.keys)) keys[type] = revive(table);
    return { creds: revive(stored.creds), keys };
  },
  write(instanceId, snapshot, options) {
    // Each table's JSON now (the snapshot's json() is valid only until the first await), as bytes
    // of their own that move to the daemon's thread.
    const tables = snapshot.tables.map((t) => ({ type: t.type, changed: t.changed, bytes: encoder.encode(t.json()) }));
    const wire: WireSnapshot = { creds: snapshot.creds, paired: snapshot.paired, tables };
    return daemon.call<void>('auth.write', [instanceId, wire, options ?? {}], tables.map((t) => t.bytes.buffer as ArrayBuffer));
  },
  remove: (instanceId) => daemon.call<void>('auth.remove', [instanceId]),
  isPaired: (instanceId) => daemon.call<boolean>('auth.isPaired', [instanceId]),
};

const epochs = new Map<string, number | null>();
const options: BaileysOptions = {
  auth,
  logger,
  settings: data.settings,
  ...(data.authDebounceMs !== undefined ? { authDebounceMs: data.authDebounceMs } : {}),
  ...(data.pairingTimeoutMs !== undefined ? { pairingTimeoutMs: data.pairingTimeoutMs } : {}),
  // The daemon's one gate: logins in flight are counted across every thread.
  loginGate: {
    async acquire() {
      const token = await daemon.call<number>('gate.acquire', []);
      let held = true;
      return () => {
        if (!held) return;
        held = false;
        daemon.note('gate.release', [token]);
      };
    },
  },
  connectSettings: (instanceId) => daemon.call<ConnectSettings>('settings', [instanceId]),
  // The lease epoch the daemon holds for an instance when its connection is made (several nodes on PostgreSQL).
  leaseEpoch: (instanceId) => epochs.get(instanceId) ?? null,
};
const factory = createBaileysConnectionFactory(options);

interface Session {
  connection: Connection;
  /** Media of received messages the daemon may still download, by token. */
  media: Map<number, InboundMedia>;
}
const sessions = new Map<number, Session>();
let nextMedia = 1;

function stateOf(connection: Connection): RemoteState {
  return { status: connection.status, qr: connection.qr, reason: connection.reason };
}

function session(handle: number): Session {
  const s = sessions.get(handle);
  if (!s) throw new Error(`no connection ${handle} in this session thread`);
  return s;
}

/** The hooks of one connection: each a note or a call to the daemon, about `handle`. */
function hooksFor(handle: number, connection: () => Connection | null, media: Map<number, InboundMedia>): ConnectionHooks {
  const state = (): RemoteState | null => {
    const c = connection();
    return c ? stateOf(c) : null;
  };
  const hook = <T>(name: string, args: unknown[]) => daemon.call<T>('hook', [handle, name, args]);
  return {
    onStatus: (change: StatusChange) => daemon.note('status', [handle, change, state()]),
    onQr: (qr: string) => daemon.note('qr', [handle, qr, state()]),
    async onMessage(message: InboundMessage, inbound?: InboundMedia, extra?: InboundExtra) {
      if (!inbound) return hook<void>('onMessage', [message, undefined, extra]);
      // The daemon downloads the media before its onMessage answers; kept until then.
      const token = nextMedia++;
      media.set(token, inbound);
      const described: RemoteMedia = {
        token,
        mimetype: inbound.mimetype,
        ...(inbound.fileName !== undefined ? { fileName: inbound.fileName } : {}),
        ...(inbound.declaredSize !== undefined ? { declaredSize: inbound.declaredSize } : {}),
        ...(inbound.kind !== undefined ? { kind: inbound.kind } : {}),
      };
      try {
        await hook<void>('onMessage', [message, described, extra]);
      } finally {
        media.delete(token);
      }
    },
    onUpdate: (update: MessageUpdate) => hook<void>('onUpdate', [update]),
    onEvent: (event: AccountEvent) => hook<void>('onEvent', [event]),
    pollOf: (messageId: string) => hook<PollKey | null>('pollOf', [messageId]),
    onLabel: (update: LabelUpdate) => hook<void>('onLabel', [update]),
  };
}

daemon
  .on('create', (handle: number, record: InstanceRecord, epoch: number | null) => {
    let made: Connection | null = null;
    const media = new Map<number, InboundMedia>();
    // Read once, by the connection's constructor (lease-epoch.ts).
    epochs.set(record.id, epoch);
    made = factory(record, hooksFor(handle, () => made, media));
    epochs.delete(record.id);
    sessions.set(handle, { connection: made, media });
    return stateOf(made);
  })
  .on('start', (handle: number) => {
    session(handle).connection.start();
  })
  .on('call', async (handle: number, method: unknown, args: unknown[]): Promise<CallAnswer> => {
    if (!isConnectionCall(method)) throw new Error(`not a connection call: ${String(method)}`);
    const { connection } = session(handle);
    const fn = connection[method] as ((...a: unknown[]) => Promise<unknown>) | undefined;
    if (typeof fn !== 'function') throw new Error(`this connection cannot ${method}`);
    try {
      const value = await fn.apply(connection, args);
      return { value, state: stateOf(connection) };
    } catch (err) {
      // The state may have moved (a failed logout still stops the socket): said with the next note.
      daemon.note('state', [handle, stateOf(connection)]);
      throw err;
    }
  })
  .on('download', async (handle: number, token: number) => {
    const media = session(handle).media.get(token);
    if (!media) throw new Error('this media is no longer offered (its message was handled)');
    const bytes = await media.download();
    return bytes instanceof Buffer ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : bytes;
  })
  .on('drop', (handle: number) => {
    sessions.delete(handle);
  });

// Listening only now: what the daemon sent meanwhile waited in the port, and finds every handler.
port.on('message', (m: WireMessage) => daemon.receive(m));
