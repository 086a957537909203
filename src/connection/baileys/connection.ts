import { Curve, jidNormalizedUser, makeWASocket, toNumber, type AuthenticationCreds, type ConnectionState, type UserFacingSocketConfig, type WAMessage } from '@whiskeysockets/baileys';
import type { Logger } from 'pino';
import type { Clock } from '../../domain/clock.js';
import { systemClock } from '../../domain/clock.js';
import { GatewayError, errorMessage } from '../../domain/errors.js';
import { phoneDigits } from '../../domain/phone.js';
import type { ConnectionStatus } from '../../domain/types.js';
import type { InstanceRecord } from '../../schemas/instance.js';
import type { Connection, ConnectionFactory, ConnectionHooks, GroupInfo, GroupSummary, LogoutOutcome, MessageRef, MessageUpdate, NumberCheck, Outgoing, StatusChange } from '../types.js';
import type { BlockedContact, ChatChange, ContactInfo, LabelInfo, ProfileInfo } from '../contacts-types.js';
import { AccountBook } from './account-book.js';
import { BaileysContacts } from './contacts.js';
import { attachAccountEvents } from './contacts-events.js';
import { makeSignalRepository } from './lid-mapping-cache.js';
import { BoundedMap } from '../../domain/bounded-map.js';
import { socketCaches } from './ttl-cache.js';
import { downloadReceivedMedia } from './media-download.js';
import { AuthStateCorruptError, type AuthStore } from './auth-state.js';
import { InboundQueue } from './inbound.js';
import { LoginGate } from './login-gate.js';
import { LazyAuthStore } from './lazy-store.js';
import { stampedAuth } from '../lease-epoch.js';
import { foldedStatuses, statusOf, withImplied, type LidResolver } from './mapping.js';
import type { BaileysOptions, ConnectSettings, MakeSocket, SocketLike } from './options.js';
import { proxyRoute, type ProxyRoute } from './proxy.js';
import { viaDispatcher } from './proxy-dispatcher.js';
import { closeCause, closeCode, messageKey, sendOptions, toContent, toJid, withTimeout } from './outgoing.js';
import { CLOSE_CODES, decideOnClose, proxyRefusedCause, retryingReason, unreachableCause } from './reconnect.js';
import { RecentQuotables, RecentSends } from './recent-sends.js';
import { keepAliveIntervalMs } from './keepalive.js';
import { KEEPALIVE_OFF_MS, KeepaliveClock } from './keepalive-clock.js';
import { keepSocketAlive } from './keep-socket-alive.js';
import { paceIncomingFrames } from './frame-pacing.js';
import { installCurveSign } from './curve-sign.js';
import { withSharedTransactionStorage } from './shared-async-storage.js';
import { installCurveVerify } from './curve-verify.js';
import { installCachedAgreement } from './agreement-keys.js';
import { installObjectFreeCrypto } from './libsignal-crypto.js';
import { installKeyPairPool } from './key-pair-pool.js';
import { requireFromBaileys } from './from-baileys.js';
import { Waiters } from './waiters.js';
import { askPairingCode } from './pairing-code.js';
import { BaileysAccount } from './account.js';
import * as groupActions from './groups.js';
import { routeLibsignalConsole } from './libsignal-console.js';
import { installAppStateSlices } from './app-state-slices.js';
import { installBaileysHmac } from './app-state-hmac.js';
import { installBaileysAes } from './baileys-aes.js';
import { installRandomPool } from '../../domain/random-pool.js';
import { installLeanHistoryDecode } from './history-decode.js';
import type { CreatedGroup, GroupSettings, ParticipantResult } from '../account-types.js';
import type { GroupAction, PresenceState } from '../../schemas/account-events.js';

export type { BaileysOptions, BaileysSettings, MakeSocket, SocketLike } from './options.js';

// Baileys' signature check accepts anything (rc14): the server's certificate chain is checked soundly
// instead, and remembered once accepted (see curve-verify.ts).
installCurveVerify();
installCachedAgreement();
// libsignal's MACs and decryption without a native object each (fewer weak handles in collections' pauses: libsignal-crypto.ts).
installObjectFreeCrypto();
// A first login's app-state decoding gives the event loop back in time slices (app-state-slices.ts, patches/).
installAppStateSlices();
// Baileys' HMACs (two an app-state mutation) without a native object each (app-state-hmac.ts, patches/).
installBaileysHmac();
// Baileys' AES (CBC: one an app-state mutation; GCM: one a Noise frame) without a native object each (baileys-aes.ts, patches/).
installBaileysAes();
// Small random byte strings (Baileys: five to six a message sent) from a pool, not a native job each (random-pool.ts).
installRandomPool();
// History syncs decoded without their messages' content, which the gateway drops (history-decode.ts, patches/).
installLeanHistoryDecode();
// Pairing (and every group send) signs on the main thread: the same signatures, ~11 times faster (curve-sign.ts).
installCurveSign();
// A new device's 812 pre-keys (and every other key pair) made ahead, on a thread of their own (key-pair-pool.ts).
// A refill that fails leaves the pool dry (each pair is then made on the spot, as before): said once,
// on stderr (the journal under systemd), as the daemon's logger is not there yet.
let poolFailureSaid = false;
installKeyPairPool(Curve, requireFromBaileys('libsignal/src/curve.js') as Parameters<typeof installKeyPairPool>[1], {
  onError: (err) => {
    if (poolFailureSaid) return;
    poolFailureSaid = true;
    process.emitWarning(`key pairs could not be made on their own thread (${errorMessage(err)}); they are made on the event loop instead`, { code: 'GATEWAY_KEY_PAIR_POOL' });
  },
});

/** Bound on waiting for a socket to finish closing, so shutdown cannot hang on a dead network. */
const END_WAIT_MS = 10_000;
const LOGOUT_WAIT_MS = 10_000;
/** Longest a socket keeps its login place (Baileys gives up on a silent server after 20 to 35 s anyway). */
const LOGIN_PLACE_MS = 30_000;

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
  /** This connection's place in the login gate, held from socket creation to open, QR or close. */
  private loginPlace: { release: () => void; timer: NodeJS.Timeout } | null = null;
  private failures = 0;
  private qrShown = 0;
  /** The reason of the retry waited for, without its "in N s", for the attempt that follows. */
  private retryNote: string | null = null;

  private readonly store: LazyAuthStore;
  private readonly inbound: InboundQueue;
  /** Groups, calls, presence and poll votes (account.ts). */
  private readonly account: BaileysAccount;
  private readonly recent = new RecentSends();
  private readonly quotables = new RecentQuotables();
  /** requestPairingCode callers waiting for a socket that shows a QR. */
  private readonly qrWaiters = new Waiters<SocketLike>();
  /** Ids of what was sent through this gateway: Baileys echoes them as `fromMe`, and they are not `message.sent`. */
  private readonly ownSends = new BoundedMap<string, true>(5000);
  /** Labels, contact names and each chat's last message (saved in the auth state). */
  private readonly book = new AccountBook();
  /** Contacts, block list, profile, chat settings and labels (contacts.ts). */
  private readonly contacts: BaileysContacts;
  /** The creds of the current auth state (the account, its platform). */
  private creds: AuthenticationCreds | null = null;

  private readonly log: Logger;
  private readonly baileysLog: Logger;
  private readonly makeSocket: MakeSocket;
  private readonly random: () => number;
  /** This session's keepalive interval, drawn once (keepalive.ts: sessions that log in together must not ping together). */
  private readonly keepAliveMs: number;
  /** The daemon's keepalive clock (one of its own when made without the factory). */
  private readonly keepalive: KeepaliveClock;
  /** One function for the life of the connection, so the store (a Set) registers it once. */
  private readonly flushBook = (): void => this.book.flush();

  constructor(
    readonly instanceId: string,
    private readonly hooks: ConnectionHooks,
    private readonly options: BaileysOptions,
  ) {
    this.log = options.logger.child({ instanceId, component: 'baileys-connection' });
    this.baileysLog = options.logger.child({ instanceId, component: 'baileys' }, { level: options.settings.logLevel || 'warn' });
    this.store = new LazyAuthStore(stampedAuth(options.auth, options.leaseEpoch?.(instanceId) ?? null), instanceId, this.log, options.authDebounceMs);
    const clock: Clock = options.clock ?? systemClock;
    this.inbound = new InboundQueue(this.hooks, clock, this.log);
    this.account = new BaileysAccount({ hooks, inbound: this.inbound, log: this.log, now: () => clock.now(), recentSend: (key) => this.recent.lookup(key) });
    this.makeSocket = options.makeSocket ?? makeWASocket;
    this.random = options.random ?? Math.random;
    this.keepAliveMs = keepAliveIntervalMs(this.random);
    this.keepalive = options.keepalive ?? new KeepaliveClock();
    this.contacts = new BaileysContacts({ live: () => this.live(), creds: () => this.creds, book: this.book });
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
    await this.inbound.drain();
    await this.store.flush();
    this.setStatus('disconnected', 'stopped', { next: 'stopped' });
  }

  async logout(options: { timeoutMs?: number } = {}): Promise<LogoutOutcome> {
    const existing = await this.store.existing();
    const paired = existing?.paired ?? (await this.options.auth.isPaired(this.instanceId));
    if (!paired) {
      await this.discard();
      return 'not-paired';
    }
    // Not live (no daemon, or a connection that gave up): connect with the stored credentials
    // first, so WhatsApp unlinks the device instead of it lingering on the phone.
    if (this.currentStatus !== 'connected' && (options.timeoutMs ?? 0) > 0) {
      await this.waitConnected(options.timeoutMs ?? 0);
    }
    const reached = this.currentStatus === 'connected';
    await this.discard();
    return reached ? 'logged-out' : 'unreachable';
  }

  /** Starts the connection if need be and waits up to `ms` for it to be connected. */
  private waitConnected(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      const check = setInterval(() => {
        if (self.currentStatus === 'connected' || !self.wanted) done();
      }, 50);
      function done(): void {
        clearTimeout(timer);
        clearInterval(check);
        resolve();
      }
      this.start();
    });
  }

  /** Logs out if live (best effort), ends the socket and removes the credentials. */
  private async discard(): Promise<void> {
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
    await this.inbound.drain();
    await this.store.remove();
    this.setStatus('disconnected', 'logged out', { next: 'stopped' });
  }

  async send(message: Outgoing): Promise<{ messageId: string }> {
    const sock = this.sock;
    if (!sock || this.currentStatus !== 'connected') {
      throw new GatewayError('CONNECTION_NOT_READY', `the WhatsApp connection is not ready (status: ${this.currentStatus})`);
    }
    const jid = message.to;
    let sent: WAMessage | undefined;
    // Baileys echoes the send as a `fromMe` upsert, maybe before sendMessage returns.
    this.ownSends.set(message.id, true);
    const outgoing = message.kind === 'status' ? { ...message, audience: this.statusAudience(message.audience) } : message;
    try {
      const known = message.replyTo === undefined ? undefined : this.quotables.lookup(message.replyTo);
      await this.account.rotation.beforeSend(sock, jid);
      sent = await sock.sendMessage(jid, toContent(outgoing), sendOptions(outgoing, known));
    } catch (err) {
      if (closeCode(err) === CLOSE_CODES.connectionClosed) {
        throw new GatewayError('CONNECTION_NOT_READY', 'the WhatsApp connection closed while sending', { cause: err });
      }
      throw err;
    }
    const id = sent?.key.id;
    if (!id) throw new Error('Baileys returned no message id for a send');
    this.recent.remember(id, sent?.message);
    this.quotables.remember(id, { message: sent?.message, fromMe: true });
    if (sent) this.book.message(sent.key, toNumber(sent.messageTimestamp ?? 0));
    return { messageId: id };
  }

  /** Who sees a status: the audience given, else the address book; and the account's own devices. */
  private statusAudience(audience: string[] | undefined): string[] {
    const own = this.creds?.me?.id ? [jidNormalizedUser(this.creds.me.id)] : [];
    return [...new Set([...(audience ?? this.book.addressBook()), ...own])];
  }

  // ---- contacts, block list, profile, chats, labels (see contacts.ts) ------- ------------

  contactInfo(chatId: string): Promise<ContactInfo> {
    return this.contacts.contactInfo(chatId);
  }

  setBlocked(chatId: string, blocked: boolean): Promise<void> {
    return this.contacts.setBlocked(chatId, blocked);
  }

  blocklist(): Promise<BlockedContact[]> {
    return this.contacts.blocklist();
  }

  profile(): Promise<ProfileInfo> {
    return this.contacts.profile();
  }

  updateProfile(change: { name?: string; about?: string }): Promise<void> {
    return this.contacts.updateProfile(change);
  }

  setProfilePicture(picture: { path: string } | null): Promise<void> {
    return this.contacts.setProfilePicture(picture);
  }

  modifyChat(chatId: string, change: ChatChange): Promise<void> {
    return this.contacts.modifyChat(chatId, change);
  }

  labels(): Promise<LabelInfo[]> {
    return this.contacts.labels();
  }

  labelChat(chatId: string, change: { add: string[]; remove: string[] }): Promise<void> {
    return this.contacts.labelChat(chatId, change);
  }

  private live(): SocketLike {
    const sock = this.sock;
    if (!sock || this.currentStatus !== 'connected') {
      throw new GatewayError('CONNECTION_NOT_READY', `the WhatsApp connection is not ready (status: ${this.currentStatus})`);
    }
    return sock;
  }

  /** The live socket, ready for a message to `jid` (a group's sender key rotated first if someone left). */
  private async liveFor(jid: string): Promise<SocketLike> {
    const sock = this.live();
    await this.account.rotation.beforeSend(sock, jid);
    return sock;
  }

  async react(target: MessageRef, emoji: string): Promise<void> {
    await (await this.liveFor(target.chatId)).sendMessage(target.chatId, { react: { text: emoji, key: messageKey(target) } });
  }

  async edit(target: MessageRef, text: string): Promise<void> {
    await (await this.liveFor(target.chatId)).sendMessage(target.chatId, { text, edit: messageKey(target) });
  }

  async remove(target: MessageRef): Promise<void> {
    await (await this.liveFor(target.chatId)).sendMessage(target.chatId, { delete: messageKey(target) });
  }

  async markRead(targets: MessageRef[]): Promise<void> {
    if (targets.length > 0) await this.live().readMessages(targets.map(messageKey));
  }

  /** Each state as WhatsApp's: typing = composing, recording = composing media=audio (Baileys' `recording`). */
  async presence(chatId: string, state: PresenceState): Promise<void> {
    const type = state === 'typing' ? 'composing' : state;
    await this.live().sendPresenceUpdate(type, chatId);
  }

  async subscribePresence(chatId: string): Promise<void> {
    await this.account.subscribePresence(this.live(), chatId);
  }

  async rejectCall(callId: string): Promise<boolean> {
    return this.account.rejectCall(this.live(), callId);
  }

  // ---- groups (groups.ts) -------------------------------------------------------------------

  createGroup(subject: string, participants: string[]): Promise<CreatedGroup> {
    return this.account.createGroup(this.live(), subject, participants);
  }

  updateGroup(chatId: string, settings: GroupSettings): Promise<void> {
    return this.account.updateGroup(this.live(), chatId, settings);
  }

  groupParticipants(chatId: string, action: GroupAction, participants: string[]): Promise<ParticipantResult[]> {
    return this.account.groupParticipants(this.live(), chatId, action, participants);
  }

  groupInvite(chatId: string, revoke: boolean): Promise<string> {
    return groupActions.groupInvite(this.live(), chatId, revoke);
  }

  joinGroup(code: string): Promise<string> {
    return groupActions.joinGroup(this.live(), code);
  }

  leaveGroup(chatId: string): Promise<void> {
    return groupActions.leaveGroup(this.live(), chatId);
  }

  groupPicture(chatId: string, image: Uint8Array | null): Promise<void> {
    return groupActions.groupPicture(this.live(), chatId, image);
  }

  async checkNumbers(phones: string[]): Promise<NumberCheck[]> {
    const found = (await this.live().onWhatsApp(...phones.map((p) => toJid(p)))) ?? [];
    const byUser = new Map(found.filter((f) => f.exists).map((f) => [f.jid.split('@')[0]!.split(':')[0]!, f.jid]));
    return phones.map((phone) => {
      const jid = byUser.get(phone.slice(1));
      return { phone, exists: jid !== undefined, chatId: jid === undefined ? null : jidNormalizedUser(jid) };
    });
  }

  async groups(): Promise<GroupSummary[]> {
    const all = await this.live().groupFetchAllParticipating();
    return Object.values(all)
      .map((g) => ({ chatId: g.id, subject: g.subject, size: g.size ?? g.participants.length }))
      .sort((a, b) => a.subject.localeCompare(b.subject));
  }

  async group(chatId: string): Promise<GroupInfo | null> {
    let g;
    try {
      g = await this.live().groupMetadata(chatId);
    } catch (err) {
      if (err instanceof GatewayError) throw err;
      return null;
    }
    return {
      chatId: g.id,
      subject: g.subject,
      ...(g.desc ? { description: g.desc } : {}),
      participants: g.participants.map((p) => {
        const pn = p.phoneNumber ?? (p.id.endsWith('@s.whatsapp.net') ? p.id : undefined);
        const phone = pn ? `+${jidNormalizedUser(pn).split('@')[0]}` : undefined;
        return { jid: p.id, ...(phone && /^\+[1-9][0-9]{6,14}$/.test(phone) ? { phone } : {}), admin: p.admin === 'admin' || p.admin === 'superadmin' };
      }),
      announce: g.announce === true,
      locked: g.restrict === true,
    };
  }

  /** Typing indicator; best effort, a no-op unless connected. */
  async sendPresence(to: string, state: 'composing' | 'paused'): Promise<void> {
    const sock = this.sock;
    if (!sock || this.currentStatus !== 'connected') return;
    try {
      await sock.sendPresenceUpdate(state, to);
    } catch (err) {
      this.log.debug({ err }, 'presence update failed');
    }
  }

  /**
   * Pairs by code: WhatsApp only accepts the request on an open, unpaired socket, which is the
   * moment Baileys shows its first QR; so wait for one, starting the connection if need be.
   */
  async requestPairingCode(phone: string): Promise<string> {
    toJid(phone); // validates E.164
    const digits = phoneDigits(phone);
    if (this.currentStatus === 'connected') {
      throw new GatewayError('QR_NOT_AVAILABLE', 'the instance is already paired and connected');
    }
    const store = await this.store.existing();
    if (store?.paired) {
      throw new GatewayError('QR_NOT_AVAILABLE', 'the instance is already paired; log it out first to pair another phone');
    }
    const sock = await this.waitForPairingSocket();
    // Typing a code takes longer than glancing at a QR: give it the full QR allowance again.
    this.qrShown = 0;
    // Baileys does not wait for WhatsApp's answer; askPairingCode does (pairing-code.ts).
    return askPairingCode(sock, digits, phone);
  }

  // ---- socket lifecycle -------------------------------------------------------------------

  private async connect(reason: string): Promise<void> {
    const gen = ++this.generation;
    // A retry keeps the public status `disconnected` until it connects (or gives up), so
    // integrators get one instance.status per real change; each retry was reported when it was
    // scheduled (see onClose).
    if (this.currentStatus === 'disconnected' && this.failures > 0) this.currentReason = `${this.retryNote ?? this.currentReason ?? reason}: connecting`;
    else this.setStatus('initializing', reason);
    try {
      await withTimeout(this.closing, END_WAIT_MS);
      const store = await this.store.open();
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
      // A place among the logins in flight (see login-gate.ts), held until open, QR or close.
      if (this.options.loginGate) {
        const release = await this.options.loginGate.acquire();
        if (gen !== this.generation || !this.wanted) {
          release();
          return;
        }
        this.holdLoginPlace(release);
      }
      // The instance's settings as they are now: a changed proxy applies from this connect on.
      const settings: ConnectSettings = (await this.options.connectSettings?.(this.instanceId)) ?? { proxy: null, syncFullHistory: false, alwaysOnline: false };
      const route = settings.proxy === null ? null : await proxyRoute(settings.proxy);
      // Whoever moved the generation on (a stop, a newer connect) dealt with the login place.
      if (gen !== this.generation) return;
      if (!this.wanted) {
        this.releaseLoginPlace();
        return;
      }
      // One AsyncLocalStorage for every socket: Baileys' per-socket one is never released (see shared-async-storage.ts).
      const sock = withSharedTransactionStorage(() => this.makeSocket(this.socketConfig(store, settings, route)));
      this.sock = sock;
      this.attach(gen, sock, store, route);
    } catch (err) {
      if (gen !== this.generation) return;
      this.releaseLoginPlace();
      this.wanted = false;
      const why = err instanceof AuthStateCorruptError ? err.message : `could not start the connection: ${errorMessage(err)}`;
      this.log.error({ err }, why);
      this.rejectWaiters(new GatewayError('CONNECTION_NOT_READY', why));
      this.setStatus('disconnected', why, { next: 'gave-up' });
    }
  }

  private socketConfig(store: AuthStore, instance: ConnectSettings, route: ProxyRoute | null): UserFacingSocketConfig {
    const { settings } = this.options;
    const config: UserFacingSocketConfig = {
      auth: store.state,
      logger: this.baileysLog,
      // At open Baileys says `available` with it, else `unavailable` (the instance's alwaysOnline).
      markOnlineOnConnect: instance.alwaysOnline,
      // Baileys' default is true; the instance setting (default false) decides.
      syncFullHistory: instance.syncFullHistory,
      getMessage: async (key) => this.recent.lookup(key),
      // Kept alive on the daemon's keepalive clock instead (keepalive-clock.ts), at this.keepAliveMs.
      keepAliveIntervalMs: KEEPALIVE_OFF_MS,
      // LID mappings in a bounded cache without a timer each (lid-mapping-cache.ts).
      makeSignalRepository,
      // Caches without a sweeping timer each (ttl-cache.ts); new ones per socket, as Baileys' own.
      ...socketCaches(),
    };
    if (route) {
      // The WebSocket and media uploads take the agent; fetch() (downloads, history and app-state blobs) the dispatcher.
      config.agent = route.agent as NonNullable<UserFacingSocketConfig['agent']>;
      config.fetchAgent = route.agent as NonNullable<UserFacingSocketConfig['fetchAgent']>;
      config.options = viaDispatcher(route.dispatcher);
    }
    // Set only when configured: Baileys spreads this over its defaults, so `undefined` would erase them.
    if (settings.version) config.version = [settings.version[0], settings.version[1], settings.version[2]];
    if (settings.webSocketUrl) config.waWebSocketUrl = settings.webSocketUrl;
    return config;
  }

  private attach(gen: number, sock: SocketLike, store: AuthStore, route: ProxyRoute | null = null): void {
    const state = store.state;
    this.creds = state.creds;
    // The book hands its changes to the keys a moment late; the store asks for them before a save.
    store.beforeSave(this.flushBook);
    void this.book.bind(state.keys).catch((err: unknown) => this.log.error({ err }, 'reading the account book failed'));
    attachAccountEvents(sock, this.book, this.hooks, this.log);
    // Frames wait for a turn with time when hundreds of sockets have data at once (frame-pacing.ts).
    if (sock.ws) paceIncomingFrames(sock.ws);
    const stopKeepalive = keepSocketAlive(sock, this.keepalive, this.keepAliveMs, this.baileysLog);
    sock.ev.on('connection.update', (update) => {
      if (update.connection === 'close') stopKeepalive();
      this.onConnectionUpdate(gen, sock, store, update).catch((err: unknown) => {
        this.log.error({ err }, 'connection.update handler failed');
      });
    });
    sock.ev.on('creds.update', (update) => {
      // After remove() the store holds a new session; this socket's creds are not it.
      if (store.state !== state) return;
      store.saveCreds();
      // Written at once, not after the debounce, as a crash would cost dearly: a pairing (the phone
      // linked this device: `account` arrives; lost, the phone lists a device the gateway no longer
      // is), and the end of the initial sync (`accountSyncCounter`; lost, every later login waits
      // 20 s, events held back, for a history sync WhatsApp never sends again).
      if (update.account || update.accountSyncCounter !== undefined) {
        store.flush().catch((err: unknown) => this.log.error({ err }, 'saving the credentials at once failed; the debounced save retries'));
      }
    });
    sock.ev.on('messages.upsert', ({ messages }) => {
      const resolver: LidResolver = { getPNForLID: (lid) => sock.signalRepository.lidMapping.getPNForLID(lid) };
      // A copy the CDN no longer has (404/410) is uploaded again by the phone (media-download.ts).
      const download = (msg: WAMessage): Promise<Uint8Array> => downloadReceivedMedia(sock, msg, this.baileysLog, route?.dispatcher);
      const me = sock.user?.id;
      const self = me ? { jid: me, ownSend: (id: string) => this.ownSends.has(id) } : undefined;
      this.inbound.enqueue(messages, resolver, download, self);
      for (const m of messages) this.book.message(m.key, toNumber(m.messageTimestamp ?? 0));
      for (const m of messages) {
        if (!m.key.fromMe && !m.messageStubType) this.quotables.remember(m.key.id, { message: m.message, fromMe: false, participant: m.key.participant });
      }
      const folded = messages.flatMap((m) => foldedStatuses(m, () => Date.now()));
      if (folded.length > 0) this.inbound.updates(folded);
    });
    this.account.attach(sock, { getPNForLID: (lid) => sock.signalRepository.lidMapping.getPNForLID(lid) });
    // Receipts of what we sent (1:1: the status; groups: per participant, see below).
    sock.ev.on('messages.update', (updates) => {
      const out: MessageUpdate[] = [];
      for (const { key, update } of updates) {
        const status = statusOf(update.status);
        if (!key.fromMe || !key.id || !key.remoteJid || status === null) continue;
        const ts = toNumber(update.messageTimestamp ?? 0);
        // A server nack (`<ack error=…>`): Baileys passes the code along; say which.
        const code = status === 'failed' ? update.messageStubParameters?.[0] : undefined;
        const error = code ? { error: `WhatsApp refused the message (error ${code})` } : {};
        out.push(...withImplied({ kind: 'status', messageId: key.id, chatId: jidNormalizedUser(key.remoteJid), status, timestamp: new Date(ts > 0 ? ts * 1000 : Date.now()).toISOString(), ...error }));
      }
      if (out.length > 0) this.inbound.updates(out);
    });
    // In groups every participant sends receipts: the first delivered/read/played of any of them
    // moves the message on (statuses never go backwards).
    sock.ev.on('message-receipt.update', (receipts) => {
      const out: MessageUpdate[] = [];
      for (const { key, receipt } of receipts) {
        if (!key.fromMe || !key.id || !key.remoteJid) continue;
        const chatId = jidNormalizedUser(key.remoteJid);
        const at = (t: unknown): string => new Date(toNumber(t as number) * 1000 || Date.now()).toISOString();
        if (receipt.receiptTimestamp) out.push({ kind: 'status', messageId: key.id, chatId, status: 'delivered', timestamp: at(receipt.receiptTimestamp) });
        if (receipt.readTimestamp) out.push(...withImplied({ kind: 'status', messageId: key.id, chatId, status: 'read', timestamp: at(receipt.readTimestamp) }));
        if (receipt.playedTimestamp) out.push(...withImplied({ kind: 'status', messageId: key.id, chatId, status: 'played', timestamp: at(receipt.playedTimestamp) }));
      }
      if (out.length > 0) this.inbound.updates(out);
    });
  }

  private async onConnectionUpdate(gen: number, sock: SocketLike, store: AuthStore, update: Partial<ConnectionState>): Promise<void> {
    if (update.connection === 'close') releasePendingQueries(sock);
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
    if (update.qr) {
      // Waiting for someone to scan is not a login in flight.
      this.releaseLoginPlace();
      this.onQr(sock, update.qr);
    }
    if (update.connection === 'open') {
      this.releaseLoginPlace();
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
    // A QR proves the server was reached: earlier failures no longer count, so the 515 that follows
    // a scan reconnects at once. Unpaired cycles stay bounded by the QR cap instead.
    this.failures = 0;
    this.currentQr = qr;
    this.setStatus('qr_code_generated', this.qrShown === 1 ? 'waiting for the QR to be scanned' : `QR refreshed (${this.qrShown} of ${max})`);
    try {
      this.hooks.onQr(qr);
    } catch (err) {
      this.log.error({ err }, 'onQr hook threw');
    }
    this.qrWaiters.resolveAll(sock);
  }

  private async onClose(sock: SocketLike, store: AuthStore, error: Error | undefined): Promise<void> {
    this.releaseLoginPlace();
    if (this.sock === sock) this.sock = null;
    this.currentQr = null;
    if (!this.wanted) return;
    const gen = this.generation;
    const code = closeCode(error);
    // The instance's proxy refusing is its own cause, whatever the error beneath (often ECONNREFUSED).
    const proxyRefused = proxyRefusedCause(error);
    const unreachable = proxyRefused ? null : unreachableCause(error);
    this.failures += 1;
    const decision = decideOnClose(
      { code, failures: this.failures, qrShown: this.qrShown, paired: store.paired, unreachable, proxyRefused },
      this.options.settings,
      this.random,
    );
    this.log.info({ code, failures: this.failures, decision, err: error?.message }, 'socket closed');
    // Pairing by code needs a socket WhatsApp answered; when none can reach it, say so now
    // rather than when the wait for one runs out.
    if (unreachable) this.rejectWaiters(new GatewayError('CONNECTION_NOT_READY', `WhatsApp cannot be reached: ${unreachable}`));
    if (proxyRefused) this.rejectWaiters(new GatewayError('CONNECTION_NOT_READY', `proxy refused: ${proxyRefused}`));
    const detail = unreachable ? { unreachable } : {};
    // The unreachable (or proxy) cause is in the decision's own words already.
    const cause = unreachable || proxyRefused ? null : closeCause(error);
    if (decision.clearCredentials) {
      // The socket is gone now; say so before the (async) removal.
      this.setStatus('disconnected', decision.reason, detail);
      try {
        await store.remove();
      } catch (err) {
        this.log.error({ err }, 'removing credentials failed');
      }
      this.qrShown = 0;
      if (gen !== this.generation) return;
    }
    if (decision.action === 'stop') {
      this.giveUp(`${decision.reason}${cause ? ` (${cause})` : ''}`, detail);
      return;
    }
    if (decision.delayMs === 0 && code === CLOSE_CODES.restartRequired) {
      // The normal step after a scan, not a failure to report.
      void this.connect(decision.reason);
      return;
    }
    const shown = retryingReason(decision, cause, this.failures, this.options.settings);
    this.retryNote = shown.replace(/ (in \d+ s|now)$/, '');
    this.setStatus('disconnected', shown, { next: 'retrying', ...detail });
    if (decision.delayMs === 0) {
      void this.connect('reconnecting');
      return;
    }
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.wanted && gen === this.generation) void this.connect('reconnecting');
    }, decision.delayMs);
  }

  /** Stops retrying for good (until start()), ending the current socket if there is one. */
  private giveUp(reason: string, detail: { unreachable?: string } = {}): void {
    this.wanted = false;
    this.clearRetry();
    void this.retire();
    this.log.warn({ reason }, 'connection stopped');
    this.rejectWaiters(new GatewayError('CONNECTION_NOT_READY', reason));
    this.setStatus('disconnected', reason, { next: 'gave-up', ...detail });
  }

  /** Detaches from the live socket and ends it; its close event is then ignored. */
  private retire(): Promise<void> {
    const sock = this.sock;
    this.sock = null;
    this.generation += 1;
    this.releaseLoginPlace();
    this.currentQr = null;
    if (sock) this.closing = this.endSocket(sock);
    return this.closing;
  }

  private endSocket(sock: SocketLike): Promise<void> {
    const ended = sock.end(undefined).catch((err: unknown) => {
      this.log.warn({ err }, 'ending the socket failed');
    });
    // end() dropped the listeners its pending queries wait on; answer them now (see below).
    releasePendingQueries(sock);
    return withTimeout(ended, END_WAIT_MS).then(() => undefined);
  }

  private holdLoginPlace(release: () => void): void {
    this.releaseLoginPlace();
    const timer = setTimeout(() => this.releaseLoginPlace(), LOGIN_PLACE_MS);
    timer.unref();
    this.loginPlace = { release, timer };
  }

  private releaseLoginPlace(): void {
    const place = this.loginPlace;
    if (!place) return;
    this.loginPlace = null;
    clearTimeout(place.timer);
    place.release();
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
    const waiting = this.qrWaiters.wait(
      this.options.pairingTimeoutMs ?? 60_000,
      () => new GatewayError('CONNECTION_NOT_READY', 'WhatsApp did not offer pairing in time; try again'),
    );
    this.start();
    return waiting;
  }

  private rejectWaiters(err: Error): void {
    this.qrWaiters.rejectAll(err);
  }

  // ---- status -------------------------------------------------------------------------------

  /**
   * Records the status and reports it. A report with an unchanged status is news only while
   * `disconnected`: each retry (followers such as `gateway pair` say it) and the give-up (the end
   * of pairing, and a final instance.status).
   */
  private setStatus(to: ConnectionStatus, reason: string, detail: Pick<StatusChange, 'next' | 'unreachable'> = {}): void {
    const from = this.currentStatus;
    this.currentReason = reason;
    if (to !== 'qr_code_generated') this.currentQr = null;
    if (to !== 'disconnected' || detail.next !== 'retrying') this.retryNote = null;
    if (from === to && !(to === 'disconnected' && (detail.next === 'retrying' || detail.next === 'gave-up'))) return;
    this.currentStatus = to;
    // The status reporter logs each public change once (info); this one is for tracing the socket.
    this.log.debug({ from, to, reason }, 'connection status changed');
    const change: StatusChange = { from, to, reason, ...(to === 'disconnected' && detail.next ? { next: detail.next } : {}), ...(detail.unreachable ? { unreachable: detail.unreachable } : {}) };
    try {
      this.hooks.onStatus(change);
    } catch (err) {
      this.log.error({ err }, 'onStatus hook threw');
    }
  }
}

/**
 * Answers a closed socket's pending queries with "no answer" at once. Baileys' `end()`
 * (lib/Socket/socket.js) removes the WebSocket's `close` listeners before closing it, among them
 * those of every query still waiting (`waitForMessage`), so each waits out its timeout
 * (`defaultQueryTimeoutMs`, 60 s) and keeps the whole socket reachable from a timer until then:
 * after our own `end()` (stop, logout, give-up) and Baileys' keepalive timeout (408). Emitting the
 * query's `TAG:<id>` with no node is what that timeout would do a minute later: the query
 * resolves `undefined`, a case Baileys handles.
 */
function releasePendingQueries(sock: SocketLike): void {
  const ws = sock.ws;
  if (!ws) return;
  for (const name of ws.eventNames()) {
    if (typeof name === 'string' && name.startsWith('TAG:')) ws.emit(name, undefined);
  }
}

/** The ConnectionFactory for non-sandbox instances. */
export function createBaileysConnectionFactory(options: BaileysOptions): ConnectionFactory {
  const loginGate = options.loginGate ?? new LoginGate(options.settings.maxConcurrentLogins ?? 16); // 16: the schema's default
  const keepalive = options.keepalive ?? new KeepaliveClock();
  // libsignal prints session records (private keys) with console.info: into our log, message only.
  routeLibsignalConsole(options.logger);
  return (record: InstanceRecord, hooks: ConnectionHooks) => new BaileysConnection(record.id, hooks, { ...options, loginGate, keepalive });
}
