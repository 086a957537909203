/**
 * A stand-in for a Baileys socket, typed against Baileys' own types (through SocketLike) so a
 * Baileys upgrade that changes the surface breaks the build. Its `ev` is Baileys' real event
 * buffer, and `end()` behaves like the real one: it emits `close` with `lastDisconnect`, then
 * drops every listener.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeEventBuffer, type AnyMessageContent, type UserFacingSocketConfig, type WAMessage, type WAPresence } from '@whiskeysockets/baileys';
import { pino } from 'pino';
import { BaileysConnection, type BaileysSettings, type SocketLike } from '../../src/connection/baileys/connection.js';
import type { MessageUpdate, StatusChange } from '../../src/connection/types.js';
import type { InboundMessage } from '../../src/schemas/events.js';
import { FileAuthStates } from '../../src/storage/files/auth-state.js';
import { UNGUARDED } from '../../src/fs/write-guard.js';

export const silent = pino({ level: 'silent' });

/** An error shaped like Baileys' Boom close errors. */
export function boom(statusCode: number, message = `closed with ${statusCode}`): Error {
  return Object.assign(new Error(message), { output: { statusCode } });
}

export class FakeSocket implements SocketLike {
  readonly ev = makeEventBuffer(silent);
  ended = false;
  endedWith: Error | undefined;
  readonly sent: { jid: string; content: AnyMessageContent }[] = [];
  readonly presence: { type: WAPresence; jid: string | undefined }[] = [];
  readonly pairingRequests: string[] = [];
  readonly lids = new Map<string, string>();
  logoutCalls = 0;
  private nextId = 1;

  readonly signalRepository = {
    lidMapping: {
      getPNForLID: async (lid: string): Promise<string | null> => this.lids.get(lid) ?? null,
      getLIDForPN: async (pn: string): Promise<string | null> => [...this.lids.entries()].find(([, p]) => p === pn)?.[0] ?? null,
    },
  };

  constructor(readonly config: UserFacingSocketConfig) {
    // Baileys registers its own merge first, so handlers see merged creds (as in socket.js).
    this.ev.on('creds.update', (update) => {
      Object.assign(config.auth.creds, update);
    });
  }

  get user(): SocketLike['user'] {
    return this.config.auth.creds.me;
  }

  sendMessage: SocketLike['sendMessage'] = async (jid, content, options) => {
    if (this.ended) throw boom(428, 'Connection Closed');
    this.sent.push({ jid, content });
    // Like Baileys: the caller's messageId becomes the key id; otherwise one is generated.
    const id = options?.messageId ?? `SENT${this.nextId++}`;
    const message: WAMessage = {
      key: { remoteJid: jid, fromMe: true, id },
      message: 'text' in content ? { conversation: content.text } : { documentMessage: { fileName: 'x' } },
    };
    return message;
  };

  sendPresenceUpdate: SocketLike['sendPresenceUpdate'] = async (type, jid) => {
    this.presence.push({ type, jid });
  };

  end: SocketLike['end'] = async (error) => {
    if (this.ended) return;
    this.ended = true;
    this.endedWith = error;
    this.ev.emit('connection.update', { connection: 'close', lastDisconnect: { error, date: new Date() } });
    this.ev.removeAllListeners('connection.update');
    this.ev.destroy();
  };

  logout: SocketLike['logout'] = async () => {
    this.logoutCalls += 1;
    void this.end(boom(401, 'Intentional Logout'));
  };

  requestPairingCode: SocketLike['requestPairingCode'] = async (phone) => {
    this.pairingRequests.push(phone);
    this.ev.emit('creds.update', { me: { id: `${phone}@s.whatsapp.net`, name: '~' }, pairingCode: 'ABCD1234' });
    return 'ABCD1234';
  };

  readonly reads: { remoteJid?: string | null; id?: string | null }[] = [];
  /** Numbers the fake WhatsApp knows (digits), for onWhatsApp. */
  readonly registered = new Set<string>();

  readMessages: SocketLike['readMessages'] = async (keys) => {
    if (this.ended) throw boom(428, 'Connection Closed');
    this.reads.push(...keys.map((k) => ({ remoteJid: k.remoteJid ?? null, id: k.id ?? null })));
  };

  onWhatsApp: SocketLike['onWhatsApp'] = async (...jids) => {
    if (this.ended) throw boom(428, 'Connection Closed');
    return jids.map((jid) => {
      const digits = jid.replace(/\D/g, '');
      return { jid: `${digits}@s.whatsapp.net`, exists: this.registered.has(digits) };
    });
  };

  groupFetchAllParticipating: SocketLike['groupFetchAllParticipating'] = async () => ({});
  // Account actions are proven through the protocol double (test/integration/double-account.test.ts), not here.
  updateMediaMessage: SocketLike['updateMediaMessage'] = async (m) => m;
  fetchStatus: SocketLike['fetchStatus'] = async () => [];
  profilePictureUrl: SocketLike['profilePictureUrl'] = async () => undefined;
  updateProfileStatus: SocketLike['updateProfileStatus'] = async () => undefined;
  updateProfileName: SocketLike['updateProfileName'] = async () => undefined;
  updateProfilePicture: SocketLike['updateProfilePicture'] = async () => undefined;
  removeProfilePicture: SocketLike['removeProfilePicture'] = async () => undefined;
  fetchBlocklist: SocketLike['fetchBlocklist'] = async () => [];
  updateBlockStatus: SocketLike['updateBlockStatus'] = async () => undefined;
  chatModify: SocketLike['chatModify'] = async () => undefined;
  addChatLabel: SocketLike['addChatLabel'] = async () => undefined;
  removeChatLabel: SocketLike['removeChatLabel'] = async () => undefined;

  groupMetadata: SocketLike['groupMetadata'] = async (jid) => {
    throw boom(404, `no group ${jid}`);
  };

  // ---- drivers: what WhatsApp would make the real socket do ----

  connecting(): void {
    this.ev.emit('connection.update', { connection: 'connecting', receivedPendingNotifications: false, qr: undefined });
  }

  qr(code: string): void {
    this.ev.emit('connection.update', { qr: code });
  }

  /** The phone scanned: Baileys stores the account, then the server asks for a restart. */
  scanned(): void {
    this.ev.emit('creds.update', {
      me: { id: '15550001111:3@s.whatsapp.net', name: 'Test' },
      account: { details: Buffer.from('details'), accountSignatureKey: Buffer.alloc(32, 1) },
    });
    this.ev.emit('connection.update', { isNewLogin: true, qr: undefined });
  }

  open(): void {
    this.ev.emit('connection.update', { connection: 'open' });
  }

  close(code: number): Promise<void> {
    return this.end(boom(code));
  }

  upsert(messages: WAMessage[], type: 'notify' | 'append' = 'notify'): void {
    this.ev.emit('messages.upsert', { messages, type });
  }
}

export const fastSettings: BaileysSettings = {
  version: null,
  webSocketUrl: null,
  maxReconnectAttempts: 4,
  maxQrRefreshes: 3,
  reconnectBaseMs: 5,
  reconnectMaxMs: 20,
  logLevel: 'silent',
    maxConcurrentConnects: 8,
};

export interface Harness {
  conn: BaileysConnection;
  dataDir: string;
  sockets: FakeSocket[];
  statuses: StatusChange[];
  qrs: string[];
  inbound: InboundMessage[];
  /** Receipts, reactions, edits and deletes reported by the connection. */
  updates: MessageUpdate[];
  /** Set when a socket was created while an earlier one was still live. */
  overlaps: number;
  /** The n-th socket (1-based), waiting for it to be created. */
  socket(n: number): Promise<FakeSocket>;
  cleanup(): Promise<void>;
}

export interface HarnessOptions {
  settings?: Partial<BaileysSettings>;
  onMessage?: (m: InboundMessage) => Promise<void>;
  onStatus?: (c: StatusChange) => void;
  onQr?: (qr: string) => void;
  dataDir?: string;
  pairingTimeoutMs?: number;
}

export async function waitFor(predicate: () => boolean, what: string, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

export async function makeHarness(options: HarnessOptions = {}): Promise<Harness> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'gw-baileys-')));
  const sockets: FakeSocket[] = [];
  const statuses: StatusChange[] = [];
  const qrs: string[] = [];
  const inbound: InboundMessage[] = [];
  const updates: MessageUpdate[] = [];
  let overlaps = 0;
  const conn = new BaileysConnection(
    'inst-1',
    {
      onStatus: (change) => {
        statuses.push(change);
        options.onStatus?.(change);
      },
      onQr: (qr) => {
        qrs.push(qr);
        options.onQr?.(qr);
      },
      onMessage: async (message) => {
        if (options.onMessage) await options.onMessage(message);
        inbound.push(message);
      },
      onUpdate: async (update) => {
        updates.push(update);
      },
    },
    {
      auth: new FileAuthStates(join(dataDir, 'auth'), UNGUARDED),
      logger: silent,
      settings: { ...fastSettings, ...options.settings },
      random: () => 0.5,
      authDebounceMs: 5,
      ...(options.pairingTimeoutMs === undefined ? {} : { pairingTimeoutMs: options.pairingTimeoutMs }),
      makeSocket: (config) => {
        if (sockets.some((s) => !s.ended)) overlaps += 1;
        const sock = new FakeSocket(config);
        sockets.push(sock);
        return sock;
      },
    },
  );
  const harness: Harness = {
    conn,
    dataDir,
    sockets,
    statuses,
    qrs,
    inbound,
    updates,
    get overlaps() {
      return overlaps;
    },
    async socket(n) {
      await waitFor(() => sockets.length >= n, `socket #${n}`);
      return sockets[n - 1] as FakeSocket;
    },
    async cleanup() {
      await conn.stop();
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
  return harness;
}

/** A received message as Baileys hands it over. */
export function incoming(id: string, fields: Partial<WAMessage> & { from?: string } = {}): WAMessage {
  const { from = '15551234567@s.whatsapp.net', ...rest } = fields;
  return {
    key: { remoteJid: from, fromMe: false, id },
    message: { conversation: `hello ${id}` },
    messageTimestamp: 1_767_225_600,
    pushName: 'Alice',
    ...rest,
  };
}
