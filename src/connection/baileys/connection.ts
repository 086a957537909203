import {
  makeWASocket,
  type AnyMessageContent,
  type ConnectionState,
  type UserFacingSocketConfig,
  type WAMessage,
  type WASocket,
} from '@whiskeysockets/baileys';
import type { Logger } from 'pino';
import type { Clock } from '../../domain/clock.js';
import { systemClock } from '../../domain/clock.js';
import { GatewayError, errorMessage } from '../../domain/errors.js';
import { isE164, phoneDigits } from '../../domain/phone.js';
import type { ConnectionStatus, InstanceRecord } from '../../domain/types.js';
import type { Connection, ConnectionFactory, ConnectionHooks, Outgoing, StatusChange } from '../types.js';
import { AuthStateCorruptError, AuthStore, authFilePath } from './auth-state.js';
import { SeenMessages, mapInbound, type LidResolver } from './mapping.js';
import { CLOSE_CODES, decideOnClose } from './reconnect.js';
import { RecentSends } from './recent-sends.js';

/** `baileys.*` in config.json. */
export interface BaileysSettings {
  /** WA Web version; null = the one bundled with Baileys (never fetched from the network). */
  version: [number, number, number] | null;
  /** Overrides Baileys' `waWebSocketUrl` (a local protocol double, a proxy); null = WhatsApp's. */
  webSocketUrl: string | null;
  maxReconnectAttempts: number;
  maxQrRefreshes: number;
  reconnectBaseMs: number;
  reconnectMaxMs: number;
  /** Level of Baileys' own logging, which is chatty below 'warn'. */
  logLevel: string;
}

/**
 * The part of a Baileys socket the gateway touches, picked from Baileys' own types so an upgrade
 * that changes this surface breaks the build instead of the daemon. The LID store is narrowed to
 * the one method used because the class has private fields no fake could match.
 */
export type SocketLike = Pick<WASocket, 'ev' | 'user' | 'sendMessage' | 'end' | 'logout' | 'requestPairingCode' | 'sendPresenceUpdate'> & {
  readonly signalRepository: {
    readonly lidMapping: Pick<WASocket['signalRepository']['lidMapping'], 'getPNForLID'>;
  };
};

export type MakeSocket = (config: UserFacingSocketConfig) => SocketLike;

export interface BaileysOptions {
  dataDir: string;
  logger: Logger;
  settings: BaileysSettings;
  clock?: Clock;
  /** Test seam; default Baileys' makeWASocket. */
  makeSocket?: MakeSocket;
  /** Jitter source in [0, 1); tests pin it. */
  random?: () => number;
  /** Quiet period before credentials are written (default 300 ms). */
  authDebounceMs?: number;
  /** How long requestPairingCode waits for WhatsApp to offer pairing (default 60 s). */
  pairingTimeoutMs?: number;
}

/** Bound on waiting for a socket to finish closing, so shutdown cannot hang on a dead network. */
const END_WAIT_MS = 10_000;
const LOGOUT_WAIT_MS = 10_000;

function closeCode(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('output' in error)) return undefined;
  const output = (error as { output?: { statusCode?: unknown } }).output;
  return typeof output?.statusCode === 'number' ? output.statusCode : undefined;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function toJid(phone: string): string {
  if (!isE164(phone)) throw new GatewayError('INVALID_PHONE', `not an E.164 phone number: ${phone}`);
  return `${phoneDigits(phone)}@s.whatsapp.net`;
}

function toContent(message: Outgoing): AnyMessageContent {
  if (message.kind === 'text') return { text: message.text };
  // A path, not a Buffer: Baileys streams the file while encrypting instead of loading it whole.
  const media = { url: message.path };
  const { mimetype, caption, fileName } = message;
  switch (message.mediaType) {
    case 'image':
      return caption === undefined ? { image: media, mimetype } : { image: media, mimetype, caption };
    case 'video':
      return caption === undefined ? { video: media, mimetype } : { video: media, mimetype, caption };
    case 'audio':
      // WhatsApp audio messages have no caption field.
      return { audio: media, mimetype };
    case 'document':
      return caption === undefined ? { document: media, mimetype, fileName } : { document: media, mimetype, fileName, caption };
  }
}

interface QrWaiter {
  resolve(sock: SocketLike): void;
  reject(err: Error): void;
}

/** One instance's WhatsApp connection over Baileys. See ../types.ts for the contract. */
export class BaileysConnection implements Connection {
  private currentStatus: ConnectionStatus = 'initializing';
  private currentQr: string | null = null;
  private currentReason: string | null = null;

  /** start() was called and neither stop(), logout() nor a give-up followed. */
  private wanted = false;
  /** Bumped whenever the live socket changes or is given up; events of older sockets are ignored. */
  private generation = 0;
  private sock: SocketLike | null = null;
  /** The last socket's end(); a new socket waits for it so two never overlap. */
  private closing: Promise<void> = Promise.resolve();
  private retryTimer: NodeJS.Timeout | null = null;
  private failures = 0;
  private qrShown = 0;

  private store: AuthStore | null = null;
  private storeOpening: Promise<AuthStore> | null = null;
  /** Inbound messages are handed on one at a time, in order; stop() drains this. */
  private inbound: Promise<void> = Promise.resolve();
  private readonly seen = new SeenMessages();
  private readonly recent = new RecentSends();
  private readonly qrWaiters = new Set<QrWaiter>();

  private readonly log: Logger;
  private readonly baileysLog: Logger;
  private readonly clock: Clock;
  private readonly makeSocket: MakeSocket;
  private readonly random: () => number;

  constructor(
    readonly instanceId: string,
    private readonly hooks: ConnectionHooks,
    private readonly options: BaileysOptions,
  ) {
    this.log = options.logger.child({ instanceId, component: 'baileys-connection' });
    this.baileysLog = options.logger.child({ instanceId, component: 'baileys' }, { level: options.settings.logLevel || 'warn' });
    this.clock = options.clock ?? systemClock;
    this.makeSocket = options.makeSocket ?? makeWASocket;
    this.random = options.random ?? Math.random;
  }

  get status(): ConnectionStatus {
    return this.currentStatus;
  }

  get qr(): string | null {
    return this.currentStatus === 'qr_code_generated' ? this.currentQr : null;
  }

  get reason(): string | null {
    return this.currentReason;
  }

  /** Path of this instance's credentials file. */
  get authFile(): string {
    return authFilePath(this.options.dataDir, this.instanceId);
  }

  /**
   * Starts connecting. Idempotent while a socket is live; while waiting out a backoff it retries
   * now, which is how `gateway pair` or an operator cuts a long wait short.
   */
  start(): void {
    if (this.wanted && !this.retryTimer) return;
    this.clearRetry();
    this.wanted = true;
    this.failures = 0;
    this.qrShown = 0;
    void this.connect('connecting');
  }

  async stop(): Promise<void> {
    this.wanted = false;
    this.clearRetry();
    this.rejectWaiters(new GatewayError('CONNECTION_NOT_READY', 'the connection was stopped'));
    await this.retire();
    await this.inbound;
    await this.flushStore();
    this.setStatus('disconnected', 'stopped');
  }

  async logout(): Promise<void> {
    this.wanted = false;
    this.clearRetry();
    this.rejectWaiters(new GatewayError('CONNECTION_NOT_READY', 'the instance was logged out'));
    const sock = this.sock;
    if (sock && this.currentStatus === 'connected') {
      this.sock = null;
      this.generation += 1;
      // Best effort: tells WhatsApp to unlink this device so it disappears from the phone's list.
      try {
        await withTimeout(sock.logout(), LOGOUT_WAIT_MS);
      } catch (err) {
        this.log.warn({ err }, 'logout request failed; removing credentials anyway');
      }
      this.closing = this.endSocket(sock);
      await this.closing;
    } else {
      await this.retire();
    }
    await this.inbound;
    const store = await this.existingStore();
    if (store) await store.remove();
    else await AuthStore.removeFile(this.authFile);
    this.setStatus('disconnected', 'logged out');
  }

  async send(message: Outgoing): Promise<{ messageId: string }> {
    const sock = this.sock;
    if (!sock || this.currentStatus !== 'connected') {
      throw new GatewayError('CONNECTION_NOT_READY', `the WhatsApp connection is not ready (status: ${this.currentStatus})`);
    }
    const jid = toJid(message.phone);
    let sent: WAMessage | undefined;
    try {
      sent = await sock.sendMessage(jid, toContent(message));
    } catch (err) {
      if (closeCode(err) === CLOSE_CODES.connectionClosed) {
        throw new GatewayError('CONNECTION_NOT_READY', 'the WhatsApp connection closed while sending', { cause: err });
      }
      throw err;
    }
    const id = sent?.key.id;
    if (!id) throw new Error('Baileys returned no message id for a send');
    this.recent.remember(id, sent?.message);
    return { messageId: id };
  }

  /** Typing indicator; best effort, a no-op unless connected. */
  async sendPresence(phone: string, state: 'composing' | 'paused'): Promise<void> {
    const sock = this.sock;
    if (!sock || this.currentStatus !== 'connected') return;
    try {
      await sock.sendPresenceUpdate(state, toJid(phone));
    } catch (err) {
      this.log.debug({ err }, 'presence update failed');
    }
  }

  /**
   * Pairs by code: WhatsApp only accepts the request on an open, unpaired socket, which is the
   * moment Baileys shows its first QR; so wait for one, starting the connection if need be.
   */
  async requestPairingCode(phone: string): Promise<string> {
    toJid(phone);
    const digits = phoneDigits(phone);
    if (this.currentStatus === 'connected') {
      throw new GatewayError('QR_NOT_AVAILABLE', 'the instance is already paired and connected');
    }
    const store = await this.existingStore();
    if (store?.paired) {
      throw new GatewayError('QR_NOT_AVAILABLE', 'the instance is already paired; log it out first to pair another phone');
    }
    const sock = await this.waitForPairingSocket();
    // Typing a code takes longer than glancing at a QR: give it the full QR allowance again.
    this.qrShown = 0;
    return sock.requestPairingCode(digits);
  }

  // ---- socket lifecycle -------------------------------------------------------------------

  private async connect(reason: string): Promise<void> {
    const gen = ++this.generation;
    this.setStatus('initializing', reason);
    try {
      await withTimeout(this.closing, END_WAIT_MS);
      const store = await this.openStore();
      if (!store.paired && store.state.creds.me != null) {
        // A pairing-code request wrote `creds.me` but the phone never confirmed; kept, it would
        // make this socket attempt a login that can only fail.
        await store.remove();
      }
      if (gen !== this.generation || !this.wanted) return;
      const stale = this.sock;
      if (stale) {
        // Unreachable by construction; if it ever happens, the old socket goes first.
        this.log.error('a live socket was found while connecting; ending it');
        this.sock = null;
        this.closing = this.endSocket(stale);
        await this.closing;
        if (gen !== this.generation || !this.wanted) return;
      }
      const sock = this.makeSocket(this.socketConfig(store));
      this.sock = sock;
      this.attach(gen, sock, store);
    } catch (err) {
      if (gen !== this.generation) return;
      this.wanted = false;
      const why = err instanceof AuthStateCorruptError ? err.message : `could not start the connection: ${errorMessage(err)}`;
      this.log.error({ err }, why);
      this.rejectWaiters(new GatewayError('CONNECTION_NOT_READY', why));
      this.setStatus('disconnected', why);
    }
  }

  private socketConfig(store: AuthStore): UserFacingSocketConfig {
    const { settings } = this.options;
    const config: UserFacingSocketConfig = {
      auth: store.state,
      logger: this.baileysLog,
      markOnlineOnConnect: false,
      getMessage: async (key) => this.recent.lookup(key),
    };
    // Set only when configured: Baileys spreads this over its defaults, so `undefined` would erase them.
    if (settings.version) config.version = [settings.version[0], settings.version[1], settings.version[2]];
    if (settings.webSocketUrl) config.waWebSocketUrl = settings.webSocketUrl;
    return config;
  }

  private attach(gen: number, sock: SocketLike, store: AuthStore): void {
    const state = store.state;
    sock.ev.on('connection.update', (update) => {
      this.onConnectionUpdate(gen, sock, store, update).catch((err: unknown) => {
        this.log.error({ err }, 'connection.update handler failed');
      });
    });
    sock.ev.on('creds.update', () => {
      // After remove() the store holds a new session; this socket's creds are not it.
      if (store.state === state) store.saveCreds();
    });
    sock.ev.on('messages.upsert', ({ messages }) => {
      const resolver: LidResolver = { getPNForLID: (lid) => sock.signalRepository.lidMapping.getPNForLID(lid) };
      this.inbound = this.inbound
        .then(() => this.handleInbound(messages, resolver))
        .catch((err: unknown) => this.log.error({ err }, 'inbound message handling failed'));
    });
  }

  private async onConnectionUpdate(gen: number, sock: SocketLike, store: AuthStore, update: Partial<ConnectionState>): Promise<void> {
    // A socket we retired on purpose reports its close too; only the current one matters.
    if (gen !== this.generation) return;
    if (update.connection === 'close') {
      await this.onClose(sock, store, update.lastDisconnect?.error);
      return;
    }
    if (update.isNewLogin) {
      this.currentQr = null;
      this.setStatus('initializing', 'QR scanned, logging in');
    }
    if (update.qr) this.onQr(sock, update.qr);
    if (update.connection === 'open') {
      this.failures = 0;
      this.qrShown = 0;
      this.rejectWaiters(new GatewayError('QR_NOT_AVAILABLE', 'the instance is already paired and connected'));
      this.setStatus('connected', 'connected');
    }
  }

  private onQr(sock: SocketLike, qr: string): void {
    const max = this.options.settings.maxQrRefreshes;
    if (this.qrShown >= max) {
      // The last allowed QR expired unscanned: stop rotating instead of pairing forever.
      this.giveUp(`QR not scanned (${this.qrShown} codes shown)`);
      return;
    }
    this.qrShown += 1;
    this.currentQr = qr;
    this.setStatus('qr_code_generated', this.qrShown === 1 ? 'waiting for the QR to be scanned' : `QR refreshed (${this.qrShown} of ${max})`);
    try {
      this.hooks.onQr(qr);
    } catch (err) {
      this.log.error({ err }, 'onQr hook threw');
    }
    for (const waiter of this.qrWaiters) waiter.resolve(sock);
    this.qrWaiters.clear();
  }

  private async onClose(sock: SocketLike, store: AuthStore, error: Error | undefined): Promise<void> {
    if (this.sock === sock) this.sock = null;
    this.currentQr = null;
    if (!this.wanted) return;
    const gen = this.generation;
    const code = closeCode(error);
    this.failures += 1;
    const decision = decideOnClose(
      { code, failures: this.failures, qrShown: this.qrShown, paired: store.paired },
      this.options.settings,
      this.random,
    );
    this.log.info({ code, failures: this.failures, decision, err: error?.message }, 'socket closed');
    if (decision.clearCredentials) {
      // The socket is gone now; say so before the (async) removal.
      this.setStatus('disconnected', decision.reason);
      try {
        await store.remove();
      } catch (err) {
        this.log.error({ err }, 'removing credentials failed');
      }
      this.qrShown = 0;
      if (gen !== this.generation) return;
    }
    if (decision.action === 'stop') {
      this.giveUp(decision.reason);
      return;
    }
    if (decision.delayMs === 0) {
      void this.connect(decision.reason);
      return;
    }
    const seconds = Math.max(1, Math.round(decision.delayMs / 1000));
    this.setStatus('disconnected', `${decision.reason} in ${seconds} s`);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.wanted && gen === this.generation) void this.connect('reconnecting');
    }, decision.delayMs);
  }

  /** Stops retrying for good (until start()), ending the current socket if there is one. */
  private giveUp(reason: string): void {
    this.wanted = false;
    this.clearRetry();
    void this.retire();
    this.log.warn({ reason }, 'connection stopped');
    this.rejectWaiters(new GatewayError('CONNECTION_NOT_READY', reason));
    this.setStatus('disconnected', reason);
  }

  /** Detaches from the live socket and ends it; its close event is then ignored. */
  private retire(): Promise<void> {
    const sock = this.sock;
    this.sock = null;
    this.generation += 1;
    this.currentQr = null;
    if (sock) this.closing = this.endSocket(sock);
    return this.closing;
  }

  private endSocket(sock: SocketLike): Promise<void> {
    const ended = sock.end(undefined).catch((err: unknown) => {
      this.log.warn({ err }, 'ending the socket failed');
    });
    return withTimeout(ended, END_WAIT_MS).then(() => undefined);
  }

  private clearRetry(): void {
    if (this.retryTimer) {
      clearTimeout(this.retryTimer);
      this.retryTimer = null;
    }
  }

  // ---- pairing by code ----------------------------------------------------------------------

  private waitForPairingSocket(): Promise<SocketLike> {
    if (this.sock && this.currentStatus === 'qr_code_generated') return Promise.resolve(this.sock);
    return new Promise<SocketLike>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.qrWaiters.delete(waiter);
        reject(new GatewayError('CONNECTION_NOT_READY', 'WhatsApp did not offer pairing in time; try again'));
      }, this.options.pairingTimeoutMs ?? 60_000);
      const waiter: QrWaiter = {
        resolve: (sock) => {
          clearTimeout(timer);
          resolve(sock);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      this.qrWaiters.add(waiter);
      this.start();
    });
  }

  private rejectWaiters(err: Error): void {
    for (const waiter of this.qrWaiters) waiter.reject(err);
    this.qrWaiters.clear();
  }

  // ---- inbound ------------------------------------------------------------------------------

  private async handleInbound(messages: WAMessage[], resolver: LidResolver): Promise<void> {
    for (const msg of messages) {
      let mapped;
      try {
        mapped = await mapInbound(msg, { resolver, now: () => this.clock.now() });
      } catch (err) {
        this.log.error({ err, id: msg.key.id }, 'could not map an inbound message');
        continue;
      }
      if (!mapped.ok) {
        this.log.trace({ id: msg.key.id, skip: mapped.skip }, 'inbound message skipped');
        continue;
      }
      const { message } = mapped;
      if (!this.seen.claim(message.messageId)) continue;
      if (!message.from.startsWith('+')) {
        this.log.info({ id: message.messageId, from: message.from }, 'sender phone number unknown; reporting the LID');
      }
      try {
        await this.hooks.onMessage(message);
      } catch (err) {
        this.seen.release(message.messageId);
        this.log.error({ err, id: message.messageId }, 'onMessage hook failed; the message was not stored');
      }
    }
  }

  // ---- credentials --------------------------------------------------------------------------

  private openStore(): Promise<AuthStore> {
    if (this.store) return Promise.resolve(this.store);
    if (!this.storeOpening) {
      const opening = AuthStore.open(this.authFile, {
        logger: this.log,
        ...(this.options.authDebounceMs === undefined ? {} : { debounceMs: this.options.authDebounceMs }),
      });
      this.storeOpening = opening;
      opening.then(
        (store) => {
          this.store = store;
        },
        () => {
          // Let a later start() try again (after the operator fixed the file).
          this.storeOpening = null;
        },
      );
    }
    return this.storeOpening;
  }

  /** The store if it is (being) opened, else null; never creates one. */
  private async existingStore(): Promise<AuthStore | null> {
    if (this.store) return this.store;
    if (!this.storeOpening) return null;
    return this.storeOpening.catch(() => null);
  }

  private async flushStore(): Promise<void> {
    const store = await this.existingStore();
    if (!store) return;
    try {
      await store.flush();
    } catch (err) {
      this.log.error({ err }, 'flushing credentials failed');
    }
  }

  // ---- status -------------------------------------------------------------------------------

  private setStatus(to: ConnectionStatus, reason: string): void {
    const from = this.currentStatus;
    this.currentReason = reason;
    if (to !== 'qr_code_generated') this.currentQr = null;
    if (from === to) return;
    this.currentStatus = to;
    this.log.info({ from, to, reason }, 'status changed');
    const change: StatusChange = { from, to, reason };
    try {
      this.hooks.onStatus(change);
    } catch (err) {
      this.log.error({ err }, 'onStatus hook threw');
    }
  }
}

/** The ConnectionFactory for non-sandbox instances. */
export function createBaileysConnectionFactory(options: BaileysOptions): ConnectionFactory {
  return (record: InstanceRecord, hooks: ConnectionHooks) => new BaileysConnection(record.id, hooks, options);
}
