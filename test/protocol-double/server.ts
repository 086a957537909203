import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { deflateSync } from 'node:zlib';
import {
  binaryNodeToString,
  Curve,
  decodeBinaryNode,
  encodeBinaryNode,
  getBinaryNodeChild,
  getBinaryNodeChildren,
  jidDecode,
  proto,
  type BinaryNode,
  type KeyPair,
} from '@whiskeysockets/baileys';
import { accountAppState, addressBook, bootstrapHistory, GROUP_MEMBERS, pushNameHistory, recentHistory, resolveAccountData, type AccountDataOption, type AccountDataSpec, type BookEntry, type GroupRef } from './account-data.js';
import { COLLECTIONS, newAppStateKey, type AppStateKey, type CollectionName, type CollectionState } from './app-state.js';
import { makeCertChain, type CertChainOptions } from './cert.js';
import { Contact, newStanzaId, SignalDevice, type Bundle, type ChatState, type ContactOptions, type ContactWire } from './contact.js';
import { Group, type GroupOptions } from './group.js';
import { GroupOps } from './groups.js';
import { CallOps } from './calls.js';
import { PresenceOps } from './presence.js';
import { AccountSide } from './account-side.js';
import { LinkCodeOps } from './link-code.js';
import { LinkedDevices } from './linked-devices.js';
import { encryptMedia, MediaHost } from './media.js';
import { encodeFrame, FrameReader, NoiseResponder } from './noise.js';
import { buildPairSuccess, parseQr, verifyPairDeviceSign, type Account, type Device } from './phone.js';
import { WebSocketServer, WS_OPEN, type WsServer, type WsSocket } from './ws.js';

export type { Account, Device } from './phone.js';

const be = (n: number, bytes: number): Buffer => {
  const b = Buffer.alloc(bytes);
  b.writeUIntBE(n, 0, bytes);
  return b;
};
const uint = (node: BinaryNode | undefined): number =>
  node?.content instanceof Uint8Array && node.content.length > 0 ? Buffer.from(node.content).readUIntBE(0, node.content.length) : 0;
const bytes = (node: BinaryNode | undefined): Buffer => (node?.content instanceof Uint8Array ? Buffer.from(node.content) : Buffer.alloc(0));
/** 32-byte X25519 public key (drops the 0x05 type prefix if present). */
const raw32 = (key: Uint8Array): Buffer => Buffer.from(key.length === 33 ? key.subarray(1) : key);
const children = (node: BinaryNode | undefined): BinaryNode[] => (Array.isArray(node?.content) ? node.content : []);
const nowSeconds = (): string => String(Math.floor(Date.now() / 1000));

const S_WHATSAPP_NET = 's.whatsapp.net';

export interface ProtocolDoubleOptions {
  /** QR refs sent in each `pair-device` (WhatsApp sends 6; Baileys shows one per QR rotation). */
  refs?: number;
  /** Phone number (digits) of the account that `scan` pairs by default. */
  phone?: string;
  /**
   * Pre-keys the double claims to hold for a device before it uploaded any (default 30). Above 5,
   * Baileys skips its upload at login. With 0 (the truth for a new device) Baileys uploads 812
   * pre-keys, which works (the double stores their ids) but leaves Baileys' 30 s upload-timeout
   * timer running (never cleared, rc14), which keeps a test process alive for 30 s after the test.
   */
  assumedPreKeys?: number;
  /** Whether to send `<ib><offline count="0"/></ib>` after `<success/>`, as the real server does. */
  sendOffline?: boolean;
  /**
   * Whether the account's phone sends a newly linked device its initial history sync after its
   * first login (default true), as WhatsApp does: a `historySyncNotification` (INITIAL_BOOTSTRAP,
   * inline payload with the contacts' LID<->PN mappings), after which Baileys syncs app state
   * (answered empty) and goes online. Without it Baileys buffers events for up to 20 s after each
   * login until then.
   */
  initialSync?: boolean;
  /**
   * What each account holds when its first device links (default `'empty'`: no chats, app state
   * unchanged, only the contacts' LID mappings). `'realistic'` is what WhatsApp gives a real
   * account: an app-state sync key shared by the phone, then history syncs of 200 chats and 2,000
   * messages (INITIAL_BOOTSTRAP inline, RECENT and PUSH_NAME as encrypted blobs on the media
   * host), 300 contacts, 5 groups whose members then write (sender keys), and app-state snapshots
   * and patches with real MACs for every collection. Or an AccountDataSpec; `scan(qr, {
   * accountData })` sets it per account. See account-data.ts.
   */
  accountData?: AccountDataOption;
  /** Debug sink for a line per event and decoded stanza (or set PROTOCOL_DOUBLE_DEBUG=1). */
  log?: (line: string) => void;
  /**
   * Whether each session keeps every stanza it received (`session.received`, default true). A
   * benchmark of a thousand sessions turns it off: the double would hold every keepalive forever.
   */
  recordStanzas?: boolean;
  /** How the certificate chain is made (default: sound, signed by the test root). See cert.ts. */
  certChain?: CertChainOptions;
}

/** What the double made of a problem it saw (a stanza it could not decrypt, a nack from Baileys, …). */
export interface DoubleError {
  at: number;
  what: string;
}

export type SessionKind = 'registration' | 'login';

/** How the phone links a device (scan, enterCode). */
export interface LinkOptions {
  /** The account's number (digits; default: the double's `phone`). */
  phone?: string;
  /** Whether to send the 515 restart after pairing (default true). */
  restart?: boolean;
  accountData?: AccountDataOption;
  /** How long to wait for Baileys' answer to pair-success (default 5 s). */
  answerMs?: number;
  /** `smba`/`smbi`: the phone runs WhatsApp Business; default a personal Android phone. */
  platform?: string;
}

/** An account's history, app state and groups (accountData), built when its first device logs in. */
export interface AccountWorld {
  spec: AccountDataSpec;
  key: AppStateKey;
  groups: Group[];
  collections: Record<CollectionName, CollectionState>;
  /** proto.ExternalBlobReference of each collection's snapshot on the media host. */
  snapshots: Map<CollectionName, Uint8Array>;
}

/** A history sync blob on the media host, as a historySyncNotification names it. */
interface UploadedHistory {
  mediaKey: Buffer;
  directPath: string;
  fileSha256: Buffer;
  fileEncSha256: Buffer;
  fileLength: number;
}

/** One WebSocket connection to the double, from connect to close. */
export class Session {
  readonly startedAt = Date.now();
  kind: SessionKind | null = null;
  /** The client's static Noise key (creds.noiseKey.public). */
  clientStatic: Buffer | null = null;
  payload: proto.ClientPayload | null = null;
  /** QR refs sent in this session's pair-device. */
  readonly refs: string[] = [];
  /** The device this session is logged in as (login) or was paired to (registration + scan). */
  device: Device | null = null;
  /** Sent `<success/>`. */
  succeeded = false;
  /** When `<success/>` was sent (Date.now()). */
  succeededAt: number | null = null;
  /** When the connection closed (Date.now()). */
  closedAt: number | null = null;
  /** Sent `<failure/>` (rejected login). */
  failedWith: string | null = null;
  closed = false;
  closeCode: number | null = null;
  /** Stop answering anything (the keepalive fault). */
  silent = false;
  /** Every stanza received after the handshake. */
  readonly received: BinaryNode[] = [];
  /** When each of `received` arrived (performance.now(), at the read that brought it). */
  readonly receivedAt: number[] = [];

  readonly noise = new NoiseResponder();
  readonly reader = new FrameReader();
  readonly ephemeral: KeyPair = Curve.generateKeyPair();
  readonly pending = new Map<string, { resolve: (node: BinaryNode) => void; reject: (err: Error) => void }>();
  /** Serialises frame handling so decryption counters and stanza order hold. */
  queue: Promise<void> = Promise.resolve();

  constructor(
    readonly id: number,
    readonly socket: WsSocket,
  ) {}

  get open(): boolean {
    return !this.closed && this.socket.readyState === WS_OPEN;
  }

  /** Open and past the Noise handshake. */
  get ready(): boolean {
    return this.open && this.noise.ready;
  }
}

/**
 * A local WhatsApp-Web server for tests: Noise XX responder with a test-rooted certificate chain,
 * QR registration and login, generic iq answers, and faults on demand. See README.md.
 */
export class ProtocolDouble implements ContactWire {
  readonly sessions: Session[] = [];
  /** Paired devices by `user:device` (the login lookup key). */
  readonly devices = new Map<string, Device>();
  readonly accounts = new Map<string, Account>();
  /** Simulated contacts by phone digits. */
  readonly contacts = new Map<string, Contact>();
  readonly groups = new Map<string, Group>();
  /** Every `<message>` a linked device sent, in order. */
  readonly gatewayMessages: BinaryNode[] = [];
  /** Chat states (`typing…`) the linked devices sent. */
  readonly chatStates: ChatState[] = [];
  /** `<presence>` stanzas the linked devices sent. */
  readonly presences: BinaryNode[] = [];
  /** Ids of contact messages Baileys asked to be sent again (retry receipts). */
  readonly retried = new Set<string>();
  /** Problems: what a contact could not decrypt, nacks from Baileys, stanzas for unknown addresses. Tests assert it stays empty. */
  readonly errors: DoubleError[] = [];
  /** Group operations, notifications and sender-key checks (groups.ts). */
  readonly groupOps: GroupOps = new GroupOps(this);
  /** Call offers and rejects (calls.ts). */
  readonly callOps: CallOps = new CallOps(this);
  /** Presence subscriptions, contacts' presence and chat states, what contacts saw (presence.ts). */
  readonly presenceOps: PresenceOps = new PresenceOps(this);
  /** Profiles, block lists, app-state patches both ways, the phone's own messages, status posts, media re-upload (account-side.ts). */
  readonly accountSide = new AccountSide(this);
  /** Pairing by link code: companion hellos the phones were shown, codes typed, outcomes (link-code.ts). */
  readonly linkCode: LinkCodeOps = new LinkCodeOps(this);
  /** Copies a linked device sends to the account's other linked devices (linked-devices.ts). */
  readonly linkedDevices: LinkedDevices = new LinkedDevices(this);

  refs: number;
  assumedPreKeys: number;
  sendOffline: boolean;
  initialSync: boolean;
  /** Default account data (accountData option); `scan(qr, { accountData })` overrides it per account. */
  accountData: AccountDataSpec | null;
  /** Each account's phone (device 0) as a Signal device, by phone digits. */
  readonly phones = new Map<string, Contact>();
  /** Error codes for the next messages from linked devices (rejectMessages). */
  private readonly rejections: string[] = [];
  /** Registrations still to be answered with an empty pair-device (refs exhausted at once). */
  private exhaustedRefs = 0;

  private readonly staticKey: KeyPair = Curve.generateKeyPair();
  private readonly certChain: Uint8Array;
  private readonly defaultPhone: string;
  private readonly log: (line: string) => void;
  /** Whether anyone reads the log: stanzas are only formatted for it then. */
  private readonly logging: boolean;
  private readonly recordStanzas: boolean;
  private nextSessionId = 1;
  private nextIqId = 1;
  /** Account data shared by every account of a spec: address book, the 1:1 history and push names (uploaded once), group members. */
  private readonly shared = new Map<AccountDataSpec, Promise<{ book: BookEntry[]; recent: UploadedHistory; pushNames: UploadedHistory; members: Contact[] }>>();
  private readonly worlds = new Map<Account, Promise<AccountWorld>>();

  private constructor(
    private readonly wss: WsServer,
    readonly port: number,
    /** The media host `media_conn` points at (HTTPS on loopback, see media.ts). */
    readonly media: MediaHost,
    options: ProtocolDoubleOptions,
  ) {
    this.refs = options.refs ?? 6;
    this.assumedPreKeys = options.assumedPreKeys ?? 30;
    this.sendOffline = options.sendOffline ?? true;
    this.initialSync = options.initialSync ?? true;
    this.accountData = resolveAccountData(options.accountData);
    this.defaultPhone = options.phone ?? '15550000001';
    this.certChain = makeCertChain(this.staticKey.public, options.certChain);
    const debug = process.env.PROTOCOL_DOUBLE_DEBUG === '1' ? (line: string) => console.error(`[double] ${line}`) : () => undefined;
    this.log = options.log ?? debug;
    this.logging = options.log !== undefined || process.env.PROTOCOL_DOUBLE_DEBUG === '1';
    this.recordStanzas = options.recordStanzas ?? true;
    wss.on('connection', (socket) => this.accept(socket));
  }

  static async start(options: ProtocolDoubleOptions = {}): Promise<ProtocolDouble> {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, path: '/ws/chat' });
    await new Promise<void>((resolve, reject) => {
      wss.on('listening', resolve);
      wss.on('error', reject);
    });
    const address = wss.address() as AddressInfo;
    const media = await MediaHost.start();
    return new ProtocolDouble(wss, address.port, media, options);
  }

  /** What to put in `baileys.webSocketUrl`. */
  get url(): string {
    return `ws://127.0.0.1:${this.port}/ws/chat`;
  }

  /** WebSocket connections accepted so far (connection attempts). */
  get connections(): number {
    return this.sessions.length;
  }

  /** Sessions open and past the handshake. */
  live(): Session[] {
    return this.sessions.filter((s) => s.ready);
  }

  /** The latest session (any state). */
  last(): Session | undefined {
    return this.sessions[this.sessions.length - 1];
  }

  /** Sessions that reached `<success/>`, in order. */
  logins(): Session[] {
    return this.sessions.filter((s) => s.succeeded);
  }

  registrations(): Session[] {
    return this.sessions.filter((s) => s.kind === 'registration');
  }

  /** Every QR ref handed out, in order. */
  allRefs(): string[] {
    return this.sessions.flatMap((s) => s.refs);
  }

  account(phone = this.defaultPhone): Account {
    let account = this.accounts.get(phone);
    if (!account) {
      account = { phone, lidUser: `${100_000_000_000_000 + Number(phone.slice(-9))}`, key: Curve.generateKeyPair(), nextDeviceId: 1 };
      this.accounts.set(phone, account);
    }
    return account;
  }

  async close(): Promise<void> {
    for (const s of this.sessions) if (!s.closed) s.socket.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    await this.media.close();
  }

  // ---- the simulated world: contacts, groups ---------------------------------------------------

  /** The account's phone JID (`DIGITS@s.whatsapp.net`), what contacts write to. */
  accountJid(phone = this.defaultPhone): string {
    return `${this.account(phone).phone}@${S_WHATSAPP_NET}`;
  }

  /** The account's LID JID (`LID@lid`). */
  accountLid(phone = this.defaultPhone): string {
    return `${this.account(phone).lidUser}@lid`;
  }

  /**
   * A simulated contact with its own Signal identity and pre-keys (created on first call; later
   * calls return the same contact and ignore `options`). `phone` with or without `+`.
   */
  async contact(phone: string, options: ContactOptions = {}): Promise<Contact> {
    const digits = phone.replace(/^\+/, '');
    const existing = this.contacts.get(digits);
    if (existing) return existing;
    const contact = new Contact(this, `+${digits}`, await SignalDevice.create(options.preKeys ?? 5), options);
    this.contacts.set(digits, contact);
    return contact;
  }

  /** A group of the account (default phone) and `contacts`. */
  group(subject: string, contacts: Contact[], options: GroupOptions & { phone?: string } = {}): Group {
    const group = new Group(subject, this.account(options.phone), contacts, options);
    this.groups.set(group.jid, group);
    return group;
  }

  /** The account's phone (device 0), a Signal device like a contact's; it sends the initial history sync. */
  async phoneOf(account: Account): Promise<Contact> {
    let phone = this.phones.get(account.phone);
    if (!phone) {
      phone = new Contact(this, `+${account.phone}`, await SignalDevice.create(5), { name: 'Phone', lid: account.lidUser, alt: false });
      this.phones.set(account.phone, phone);
    }
    return phone;
  }

  /** Linked, not removed devices of an account. */
  devicesOf(account: Account): Device[] {
    return [...this.devices.values()].filter((d) => d.account === account && !d.removed);
  }

  accountByJid(jid: string): Account | undefined {
    const decoded = jidDecode(jid);
    if (!decoded) return undefined;
    if (decoded.server === 'lid') return [...this.accounts.values()].find((a) => a.lidUser === decoded.user);
    if (decoded.server === S_WHATSAPP_NET) return this.accounts.get(decoded.user);
    return undefined;
  }

  contactByJid(jid: string): Contact | undefined {
    const decoded = jidDecode(jid);
    if (!decoded) return undefined;
    if (decoded.server === 'lid') return [...this.contacts.values()].find((c) => c.lidUser === decoded.user);
    if (decoded.server === S_WHATSAPP_NET) return this.contacts.get(decoded.user);
    return undefined;
  }

  groupByJid(jid: string): Group | undefined {
    return this.groups.get(jid);
  }

  /** A linked device's pre-key bundle; hands out (consumes) one of the pre-keys it uploaded, if any. */
  bundleOf(device: Device): Bundle {
    const next = device.preKeys.entries().next();
    let preKey: Bundle['preKey'];
    if (!next.done) {
      const [id, pub] = next.value;
      device.preKeys.delete(id);
      device.usedPreKeys.push(id);
      preKey = { id, public: Buffer.from(pub, 'latin1') };
    }
    return { registrationId: device.registrationId, identity: raw32(device.identityKey), signedPreKey: { ...device.signedPreKey, public: raw32(device.signedPreKey.public) }, ...(preKey ? { preKey } : {}) };
  }

  /**
   * Queues a stanza for a linked device: sent now to its live session(s), kept until Baileys
   * acknowledges it (`<ack>`, or `<receipt>` for a message) and sent again, marked `offline`, at its
   * next login, as WhatsApp's offline queue does.
   */
  deliver(device: Device, node: BinaryNode): void {
    device.outbox.push(node);
    for (const s of this.onlineSessions(device)) this.send(s, node);
  }

  /** Sends a stanza that is not queued (presence, chat states) to the device's live sessions only. */
  push(device: Device, node: BinaryNode): void {
    for (const s of this.onlineSessions(device)) this.send(s, node);
  }

  /** Stanzas waiting for a device's acknowledgement. */
  pending(device: Device | undefined = this.lastDevice()): BinaryNode[] {
    return device ? [...device.outbox] : [];
  }

  private onlineSessions(device: Device): Session[] {
    return this.sessions.filter((s) => s.succeeded && s.ready && !s.silent && s.device === device);
  }

  error(what: string): void {
    this.errors.push({ at: Date.now(), what });
    this.log(`ERROR ${what}`);
  }

  logLine(line: string): void {
    this.log(line);
  }

  // ---- the phone ----------------------------------------------------------------------------

  /**
   * Plays the phone scanning `qr` (Baileys' QR string): sends pair-success with a device identity
   * signed by the account key and HMAC'd with the QR's adv secret, waits for Baileys' signed
   * reply and checks its device signature, then restarts the stream with 515 as WhatsApp does.
   * Resolves with the new device once Baileys' reply checked out.
   */
  async scan(qr: string, options: LinkOptions = {}): Promise<Device> {
    const parsed = parseQr(qr);
    const session = this.sessions.find((s) => s.refs.includes(parsed.ref));
    if (!session) throw new Error(`scan: no session issued ref ${parsed.ref}`);
    if (!session.ready) throw new Error(`scan: the session that issued ref ${parsed.ref} is no longer open`);
    if (!session.clientStatic?.equals(parsed.noiseKey)) throw new Error('scan: the QR noise key is not the one the client used in its handshake');
    const pairing = session.payload?.devicePairingData;
    if (!pairing?.eIdent || !Buffer.from(pairing.eIdent).equals(parsed.identityKey)) {
      throw new Error('scan: the QR identity key is not the one the client registered');
    }
    return this.linkSession(session, { noiseKey: parsed.noiseKey, identityKey: parsed.identityKey, advSecret: parsed.advSecret }, options);
  }

  /**
   * The phone types a link code a companion showed ("Link with phone number instead"): see
   * link-code.ts. Resolves with the new device once Baileys answered pair-success; rejects when
   * the phone could not open the companion's key bundle (a wrong code), as WhatsApp's phone shows
   * "Couldn't link device" while the companion hears nothing.
   */
  enterCode(code: string, options: LinkOptions = {}): Promise<Device> {
    return this.linkCode.enter(code, options);
  }

  /** Numbers with a WhatsApp account (a phone) in the double: the default account's and every account made so far. */
  registered(phone: string): Account | undefined {
    const digits = phone.replace(/^\+/, '');
    return digits === this.defaultPhone || this.accounts.has(digits) ? this.account(digits) : undefined;
  }

  /**
   * What the phone does once it trusts a registering session's keys (a scanned QR, or a link
   * code's key exchange): pair-success with the device identity signed by the account key and
   * HMAC'd with the adv secret, Baileys' signed reply checked, then the 515 restart.
   */
  async linkSession(session: Session, keys: { noiseKey: Buffer; identityKey: Buffer; advSecret: Buffer }, options: LinkOptions = {}): Promise<Device> {
    const pairing = session.payload?.devicePairingData;
    if (!pairing?.eIdent || !Buffer.from(pairing.eIdent).equals(keys.identityKey)) throw new Error('link: the identity key is not the one the client registered');
    const account = this.account(options.phone);
    if (options.accountData !== undefined) account.data = resolveAccountData(options.accountData);
    await this.phoneOf(account);
    const deviceId = account.nextDeviceId++;
    const device: Device = {
      jid: `${account.phone}:${deviceId}@${S_WHATSAPP_NET}`,
      lid: `${account.lidUser}:${deviceId}@lid`,
      key: `${account.phone}:${deviceId}`,
      account,
      deviceId,
      noiseKey: keys.noiseKey,
      identityKey: keys.identityKey,
      registrationId: pairing.eRegid ? Buffer.from(pairing.eRegid).readUIntBE(0, pairing.eRegid.length) : 0,
      signedPreKey: {
        id: pairing.eSkeyId ? Buffer.from(pairing.eSkeyId).readUIntBE(0, pairing.eSkeyId.length) : 0,
        public: Buffer.from(pairing.eSkeyVal ?? []),
        signature: Buffer.from(pairing.eSkeySig ?? []),
      },
      removed: false,
      preKeys: new Map(),
      usedPreKeys: [],
      outbox: [],
      syncId: null,
      syncIds: [],
      syncSent: false,
      appState: new Map(),
    };
    // `smba`/`smbi`: the phone runs WhatsApp Business (Android/iOS); default a personal Android phone.
    const { node, details } = buildPairSuccess(this.iqId(), device, keys.advSecret, options.platform);
    const reply = await this.request(session, node, options.answerMs);
    verifyPairDeviceSign(reply, details, device);
    this.devices.set(device.key, device);
    session.device = device;
    this.log(`#${session.id} paired ${device.jid}`);
    if (options.restart !== false) this.streamError(515, [session]);
    return device;
  }

  /**
   * Unlinks a device as the phone would: the device is forgotten (later logins get
   * `<failure reason="401"/>`) and its live sessions get `<stream:error code="401"><conflict
   * type="device_removed"/>`, which Baileys reports as 401 loggedOut.
   */
  removeDevice(device: Device | undefined = this.lastDevice()): void {
    if (!device) throw new Error('removeDevice: no device');
    device.removed = true;
    this.devices.delete(device.key);
    const sessions = this.live().filter((s) => s.device?.key === device.key);
    this.sendStreamError(sessions, { tag: 'stream:error', attrs: { code: '401' }, content: [{ tag: 'conflict', attrs: { type: 'device_removed' } }] });
  }

  lastDevice(): Device | undefined {
    return [...this.devices.values()].pop();
  }

  // ---- faults -------------------------------------------------------------------------------

  /** `<stream:error code="CODE"/>` to the given (default: all live) sessions; Baileys ends with that status code. */
  streamError(code: number, sessions: Session[] = this.live()): void {
    this.sendStreamError(sessions, { tag: 'stream:error', attrs: { code: String(code) } });
  }

  /** Another client took over the session: `<stream:error><conflict type="replaced"/>`, which Baileys maps to 440. */
  replaced(sessions: Session[] = this.live()): void {
    this.sendStreamError(sessions, { tag: 'stream:error', attrs: {}, content: [{ tag: 'conflict', attrs: { type: 'replaced' } }] });
  }

  /** Drops the TCP connections without a close frame (Baileys: 428 connectionClosed). */
  drop(sessions: Session[] = this.sessions.filter((s) => s.open)): void {
    for (const s of sessions) s.socket.terminate();
  }

  /** Stops answering the given (default: all live) sessions; Baileys' keepalive gives up (408). */
  stopAnswering(sessions: Session[] = this.live()): void {
    for (const s of sessions) s.silent = true;
  }

  /**
   * The server refuses the next `count` messages the linked devices send: `<ack class="message"
   * error=CODE>` instead of delivering them (WhatsApp uses e.g. 463 for a missing privacy token,
   * 479 for a stanza it rejects). Baileys reports it as status ERROR.
   */
  rejectMessages(error: string, count = 1): void {
    for (let i = 0; i < count; i++) this.rejections.push(error);
  }

  /** The next `count` registrations get a pair-device without refs: Baileys ends at once with 408 "QR refs attempts ended". */
  exhaustRefs(count = 1): void {
    this.exhaustedRefs += count;
  }

  // ---- connection handling ------------------------------------------------------------------

  private accept(socket: WsSocket): void {
    const session = new Session(this.nextSessionId++, socket);
    this.sessions.push(session);
    this.log(`#${session.id} connected`);
    socket.on('message', (data) => {
      session.queue = session.queue
        .then(() => this.onData(session, data))
        .catch((err: unknown) => {
          this.log(`#${session.id} protocol error: ${err instanceof Error ? err.stack : String(err)}`);
          socket.terminate();
        });
    });
    socket.on('close', (code) => {
      session.closed = true;
      session.closedAt = Date.now();
      session.closeCode = code;
      for (const p of session.pending.values()) p.reject(new Error('connection closed'));
      session.pending.clear();
      this.log(`#${session.id} closed (${code})`);
    });
    socket.on('error', (err) => this.log(`#${session.id} socket error: ${err.message}`));
  }

  private async onData(session: Session, data: Buffer): Promise<void> {
    const at = performance.now();
    for (const frame of session.reader.push(data)) {
      if (session.noise.ready) {
        const plain = session.noise.decryptFrame(frame);
        const node = await decodeBinaryNode(plain);
        if (this.logging) this.log(`#${session.id} <- ${binaryNodeToString(node).slice(0, 400)}`);
        if (this.recordStanzas) {
          session.received.push(node);
          session.receivedAt.push(at);
        }
        await this.onNode(session, node);
      } else {
        this.onHandshake(session, frame);
      }
    }
  }

  private onHandshake(session: Session, frame: Buffer): void {
    const msg = proto.HandshakeMessage.decode(frame);
    if (msg.clientHello?.ephemeral) {
      const hello = session.noise.serverHello(msg.clientHello.ephemeral, session.ephemeral, this.staticKey, this.certChain);
      session.socket.send(encodeFrame(proto.HandshakeMessage.encode({ serverHello: hello }).finish()));
      return;
    }
    if (msg.clientFinish?.static && msg.clientFinish.payload) {
      const { clientStatic, payload } = session.noise.clientFinish(msg.clientFinish.static, msg.clientFinish.payload, session.ephemeral);
      session.clientStatic = clientStatic;
      session.payload = proto.ClientPayload.decode(payload);
      if (session.payload.devicePairingData) {
        session.kind = 'registration';
        this.log(`#${session.id} registration`);
        this.onRegistration(session);
      } else {
        session.kind = 'login';
        this.log(`#${session.id} login as ${String(session.payload.username)}:${session.payload.device ?? 0}`);
        this.onLogin(session);
      }
      return;
    }
    throw new Error('unexpected handshake message');
  }

  private onRegistration(session: Session): void {
    if (session.silent) return;
    let count = this.refs;
    if (this.exhaustedRefs > 0) {
      this.exhaustedRefs -= 1;
      count = 0;
    }
    for (let i = 0; i < count; i++) session.refs.push(`2@${randomBytes(36).toString('base64')}`);
    this.send(session, {
      tag: 'iq',
      attrs: { from: S_WHATSAPP_NET, type: 'set', id: this.iqId(), xmlns: 'md' },
      content: [{ tag: 'pair-device', attrs: {}, content: session.refs.map((ref) => ({ tag: 'ref', attrs: {}, content: Buffer.from(ref) })) }],
    });
  }

  private onLogin(session: Session): void {
    if (session.silent) return;
    const payload = session.payload!;
    const key = `${String(payload.username)}:${payload.device ?? 0}`;
    const device = this.devices.get(key);
    if (!device || device.removed || !session.clientStatic!.equals(device.noiseKey)) {
      session.failedWith = '401';
      this.log(`#${session.id} login refused: ${device ? 'noise key mismatch' : 'unknown device'} ${key}`);
      this.send(session, { tag: 'failure', attrs: { reason: '401', location: 'double' } });
      return;
    }
    session.device = device;
    session.succeeded = true;
    session.succeededAt = Date.now();
    this.send(session, {
      tag: 'success',
      attrs: { t: String(Math.floor(Date.now() / 1000)), lid: device.lid, location: 'double', props: '1', abprops: '1', creation: String(Math.floor(Date.now() / 1000)) },
    });
    // What arrived while the device was away (or was sent and never acknowledged), then the end
    // of the offline batch, as WhatsApp does.
    const backlog = [...device.outbox];
    for (const node of backlog) this.send(session, { ...node, attrs: { ...node.attrs, offline: '1' } });
    if (this.sendOffline) {
      this.send(session, { tag: 'ib', attrs: { from: S_WHATSAPP_NET }, content: [{ tag: 'offline', attrs: { count: String(backlog.length) } }] });
    }
    if (this.initialSync && device.syncId === null) {
      device.syncId = newStanzaId();
      const spec = this.dataOf(device.account);
      (spec ? this.sendAccountData(device, spec) : this.sendInitialSync(device))
        .then(() => (device.syncSent = true))
        .catch((err: unknown) => this.error(`initial history sync for ${device.jid} failed: ${err instanceof Error ? err.stack : String(err)}`));
    }
  }

  /**
   * The phone's history sync for a new device: a peer message with a historySyncNotification
   * (INITIAL_BOOTSTRAP) whose payload is inline (zlib-deflated proto.HistorySync: no chats, the
   * contacts' LID<->PN mappings). Baileys then syncs app state and goes online.
   */
  private async sendInitialSync(device: Device): Promise<void> {
    const phone = await this.phoneOf(device.account);
    const mappings = [...this.contacts.values()].filter((c) => !c.hidesPhone).map((c) => ({ pnJid: c.jid, lidJid: c.lid }));
    const history = proto.HistorySync.encode({ syncType: proto.HistorySync.HistorySyncType.INITIAL_BOOTSTRAP, conversations: [], phoneNumberToLidMappings: mappings, progress: 100 }).finish();
    await phone.send(
      this.accountJid(device.account.phone),
      {
        protocolMessage: {
          type: proto.Message.ProtocolMessage.Type.HISTORY_SYNC_NOTIFICATION,
          historySyncNotification: { syncType: proto.HistorySync.HistorySyncType.INITIAL_BOOTSTRAP, initialHistBootstrapInlinePayload: deflateSync(history), progress: 100, chunkOrder: 0 },
        },
      },
      { type: 'text', devices: [device], attrs: { category: 'peer' }, id: device.syncId! },
    );
  }

  /**
   * Resolves once the device acknowledged its initial history sync (Baileys is then online and
   * has a session with its phone). Sending before that races the phone's own session start.
   */
  async synced(device: Device | undefined = this.lastDevice(), ms = 10_000): Promise<void> {
    if (!this.initialSync) return;
    const until = Date.now() + ms;
    const done = (d: Device): boolean => {
      if (d.syncId === null || d.syncSent === false) return false;
      const ids = new Set([d.syncId, ...(d.syncIds ?? [])]);
      if (d.outbox.some((n) => ids.has(n.attrs.id ?? ''))) return false;
      const world = this.worldNow(d.account);
      return !world || COLLECTIONS.every((name) => (d.appState?.get(name) ?? -1) >= world.collections[name].version);
    };
    while (!device || !done(device)) {
      if (Date.now() > until) throw new Error(`the initial sync of ${device?.jid ?? 'no device'} was not acknowledged within ${ms} ms`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  // ---- account data (accountData): history, app state, groups -------------------------------

  /** What the account holds (its own setting, else the double's default); null: nothing beyond the LID mappings. */
  dataOf(account: Account): AccountDataSpec | null {
    return account.data === undefined ? this.accountData : account.data;
  }

  /** The account's history, app state and groups, once its first device logged in (else undefined). */
  worldNow(account: Account): AccountWorld | undefined {
    return this.builtWorlds.get(account);
  }

  private readonly builtWorlds = new Map<Account, AccountWorld>();

  /** The address book, the shared history blobs and the group members of a spec (built once). */
  private sharedOf(spec: AccountDataSpec): Promise<{ book: BookEntry[]; recent: UploadedHistory; pushNames: UploadedHistory; members: Contact[] }> {
    let shared = this.shared.get(spec);
    if (!shared) {
      shared = (async () => {
        const book = addressBook(spec.contacts);
        const upload = (bytes: Buffer): UploadedHistory => {
          const enc = encryptMedia(deflateSync(bytes), 'md-msg-hist');
          const stored = this.media.put(enc.file, 'md-msg-hist');
          return { mediaKey: enc.mediaKey, directPath: stored.directPath, fileSha256: enc.fileSha256, fileEncSha256: enc.fileEncSha256, fileLength: enc.fileLength };
        };
        // Group members are real contacts (Signal devices): the first few of the address book.
        const count = spec.groups > 0 ? Math.min(book.length, GROUP_MEMBERS + 4 * (spec.groups - 1)) : 0;
        const members: Contact[] = [];
        for (const b of book.slice(0, count)) members.push(await this.contact(`+${b.phone}`, { name: b.name }));
        return { book, recent: upload(recentHistory(spec, book)), pushNames: upload(pushNameHistory(book)), members };
      })();
      this.shared.set(spec, shared);
    }
    return shared;
  }

  /** Builds (once) the account's groups, app-state key and collections, and uploads the snapshots. */
  private worldOf(account: Account, spec: AccountDataSpec): Promise<AccountWorld> {
    let world = this.worlds.get(account);
    if (!world) {
      world = (async () => {
        const { book, members } = await this.sharedOf(spec);
        const subjects = ['Family', 'Work', 'Football club', 'Neighbours', 'Book club'];
        const groups: Group[] = [];
        const refs: GroupRef[] = [];
        for (let g = 0; g < spec.groups; g++) {
          const contacts = members.slice(4 * g, 4 * g + GROUP_MEMBERS);
          const subject = subjects[g % subjects.length]! + (g >= subjects.length ? ` ${g + 1}` : '');
          const group = this.group(subject, contacts, { phone: account.phone, admins: contacts.slice(0, 1) });
          groups.push(group);
          refs.push({ jid: group.jid, subject, members: contacts.map((c) => book.find((b) => `+${b.phone}` === c.phone)!) });
        }
        const key = newAppStateKey();
        const collections = accountAppState(key, spec, book, refs, `Account ${account.phone}`);
        const snapshots = new Map<CollectionName, Uint8Array>();
        for (const name of COLLECTIONS) {
          const snapshot = collections[name].snapshot;
          if (!snapshot) continue;
          const enc = encryptMedia(snapshot, 'md-app-state');
          const stored = this.media.put(enc.file, 'md-app-state');
          snapshots.set(
            name,
            proto.ExternalBlobReference.encode({ mediaKey: enc.mediaKey, directPath: stored.directPath, handle: `double-${name}`, fileSizeBytes: enc.fileLength, fileSha256: enc.fileSha256, fileEncSha256: enc.fileEncSha256 }).finish(),
          );
        }
        const built: AccountWorld = { spec, key, groups, collections, snapshots };
        this.builtWorlds.set(account, built);
        return built;
      })();
      this.worlds.set(account, world);
    }
    return world;
  }

  /**
   * What the phone sends a newly linked device of an account with data, in WhatsApp's order: the
   * app-state sync key, the INITIAL_BOOTSTRAP history (inline: LID mappings, the groups' latest
   * messages), the RECENT history (1:1 chats) and push names as blobs on the media host; then
   * members write in each group, sending the device their sender keys. Baileys syncs app state on
   * the bootstrap, answered by answerAppState.
   */
  private async sendAccountData(device: Device, spec: AccountDataSpec): Promise<void> {
    const account = device.account;
    const phone = await this.phoneOf(account);
    const world = await this.worldOf(account, spec);
    const { book, recent, pushNames } = await this.sharedOf(spec);
    const to = this.accountJid(account.phone);
    const ids = (device.syncIds ??= []);
    const peer = async (message: proto.IMessage, id = newStanzaId()): Promise<void> => {
      ids.push(id);
      await phone.send(to, message, { type: 'text', devices: [device], attrs: { category: 'peer' }, id });
    };
    const HistoryType = proto.HistorySync.HistorySyncType;
    const notification = (syncType: proto.HistorySync.HistorySyncType, blob: UploadedHistory, chunkOrder: number): proto.IMessage => ({
      protocolMessage: {
        type: proto.Message.ProtocolMessage.Type.HISTORY_SYNC_NOTIFICATION,
        historySyncNotification: { syncType, ...blob, chunkOrder, progress: 100 },
      },
    });
    await peer({
      protocolMessage: {
        type: proto.Message.ProtocolMessage.Type.APP_STATE_SYNC_KEY_SHARE,
        appStateSyncKeyShare: {
          keys: [
            {
              keyId: { keyId: world.key.keyId },
              keyData: { keyData: world.key.keyData, fingerprint: { rawId: Number(account.phone.slice(-9)), currentIndex: 0, deviceIndexes: [0, device.deviceId] }, timestamp: world.key.timestamp },
            },
          ],
        },
      },
    });
    const simulated = [...this.contacts.values()].filter((c) => !c.hidesPhone).map((c) => ({ pnJid: c.jid, lidJid: c.lid }));
    const refs: GroupRef[] = world.groups.map((g) => ({ jid: g.jid, subject: g.subject, members: g.contacts().map((c) => book.find((b) => `+${b.phone}` === c.phone)!) }));
    await peer(
      {
        protocolMessage: {
          type: proto.Message.ProtocolMessage.Type.HISTORY_SYNC_NOTIFICATION,
          historySyncNotification: { syncType: HistoryType.INITIAL_BOOTSTRAP, initialHistBootstrapInlinePayload: bootstrapHistory(refs, book, simulated), progress: 100, chunkOrder: 0 },
        },
      },
      device.syncId!,
    );
    await peer(notification(HistoryType.RECENT, recent, 1));
    await peer(notification(HistoryType.PUSH_NAME, pushNames, 2));
    for (const group of world.groups) {
      for (const member of group.contacts().slice(0, spec.groupSenders)) {
        const id = newStanzaId();
        ids.push(id);
        await member.send(group.jid, { conversation: `hi from ${member.name}` }, { type: 'text', id, devices: [device] });
      }
    }
  }

  /**
   * `w:sync:app:state` for an account with data: per collection asked, a snapshot (an external
   * blob) when the client asks for one or is behind it, then the patches it lacks. A collection the
   * client asks for again after it had everything means its MAC checks failed: an error.
   */
  private answerAppState(device: Device, world: AccountWorld, node: BinaryNode): BinaryNode[] {
    const served = (device.appState ??= new Map());
    const asked = getBinaryNodeChildren(getBinaryNodeChild(node, 'sync'), 'collection');
    return [
      {
        tag: 'sync',
        attrs: {},
        content: asked.map((c) => {
          const name = c.attrs.name ?? '';
          const from = Number(c.attrs.version ?? '0');
          const wantsSnapshot = c.attrs.return_snapshot === 'true';
          const state = (world.collections as Partial<Record<string, CollectionState>>)[name];
          if (!state) return { tag: 'collection', attrs: { name, version: String(from) } };
          if ((served.get(name) ?? -1) >= state.version && (wantsSnapshot || from < state.version)) {
            this.error(`${device.jid} asked for app state ${name} again (from v${from}${wantsSnapshot ? ', snapshot' : ''}) after it was served up to v${state.version}: its MAC checks failed?`);
          }
          const content: BinaryNode[] = [];
          let patches = state.patches.filter((p) => p.version > from);
          const snapshot = world.snapshots.get(name as CollectionName);
          if (snapshot && (wantsSnapshot || from < state.snapshotVersion)) {
            content.push({ tag: 'snapshot', attrs: {}, content: snapshot });
            patches = state.patches;
          }
          if (patches.length > 0) content.push({ tag: 'patches', attrs: {}, content: patches.map((p) => ({ tag: 'patch', attrs: {}, content: p.bytes })) });
          served.set(name, state.version);
          return { tag: 'collection', attrs: { name, version: String(state.version) }, content };
        }),
      },
    ];
  }

  private async onNode(session: Session, node: BinaryNode): Promise<void> {
    if (session.silent) return;
    switch (node.tag) {
      case 'iq':
        break;
      case 'message':
        await this.onClientMessage(session, node);
        return;
      case 'receipt':
        this.onClientReceipt(session, node);
        return;
      case 'ack':
        this.onClientAck(session, node);
        return;
      case 'chatstate': {
        const state: ChatState = { state: children(node)[0]?.tag ?? '', from: node.attrs.from ?? '', to: node.attrs.to ?? '' };
        this.chatStates.push(state);
        const contact = node.attrs.to ? this.contactByJid(node.attrs.to) : undefined;
        contact?.acceptChatState(node);
        if (contact) this.presenceOps.chatState(contact, node);
        return;
      }
      case 'presence':
        this.presences.push(node);
        if (session.device) this.presenceOps.fromDevice(session.device, node, this.contacts.values());
        return;
      case 'call':
        if (session.device) this.send(session, this.callOps.fromDevice(session.device, node));
        return;
      default:
        return;
    }
    const id = node.attrs.id;
    if (node.attrs.type === 'result' || node.attrs.type === 'error') {
      const waiter = id === undefined ? undefined : session.pending.get(id);
      if (waiter && id !== undefined) {
        session.pending.delete(id);
        waiter.resolve(node);
      }
      return;
    }
    const special = session.device ? await this.answerAccountIq(session.device, node) : null;
    this.send(session, special ?? this.answerIq(session, node));
  }

  /** Group operations and the group picture (groups.ts); null for every other iq. */
  private async answerAccountIq(device: Device, node: BinaryNode): Promise<BinaryNode | null> {
    const result: BinaryNode = { tag: 'iq', attrs: { from: node.attrs.to ?? S_WHATSAPP_NET, type: 'result', id: node.attrs.id ?? '' } };
    if (node.attrs.xmlns === 'w:g2') return this.groupOps.answer(device, node, result);
    if (node.attrs.xmlns === 'w:profile:picture' && node.attrs.target?.endsWith('@g.us')) return this.groupOps.picture(device, node, result);
    return null;
  }

  /** A generic, well-formed answer to the iq queries Baileys makes around login. */
  private answerIq(session: Session, node: BinaryNode): BinaryNode {
    const result: BinaryNode = { tag: 'iq', attrs: { from: S_WHATSAPP_NET, type: 'result', id: node.attrs.id ?? '' } };
    const xmlns = node.attrs.xmlns;
    const child = Array.isArray(node.content) ? node.content[0] : undefined;
    const device = session.device;
    if (xmlns === 'md' && child?.tag === 'link_code_companion_reg') return this.linkCode.answer(session, node, result);
    const answered = this.accountSide.answerIq(session, node, result);
    if (answered) return answered;
    if (xmlns === 'encrypt' && child?.tag === 'count') {
      // Until a device uploaded any, claim `assumedPreKeys` (above 5 Baileys skips its upload).
      const everUploaded = device ? device.preKeys.size + device.usedPreKeys.length > 0 : false;
      result.content = [{ tag: 'count', attrs: { value: String(everUploaded ? device!.preKeys.size : this.assumedPreKeys) } }];
    } else if (xmlns === 'encrypt' && child?.tag === 'digest') {
      result.content = [{ tag: 'digest', attrs: {} }];
    } else if (xmlns === 'encrypt' && node.attrs.type === 'get' && child?.tag === 'key') {
      result.content = this.answerKeyFetch(node);
    } else if (xmlns === 'encrypt' && node.attrs.type === 'set' && getBinaryNodeChild(node, 'list')) {
      // Pre-key upload: keep the public keys; they go into bundles others fetch.
      for (const k of getBinaryNodeChildren(getBinaryNodeChild(node, 'list'), 'key')) {
        device?.preKeys.set(uint(getBinaryNodeChild(k, 'id')), bytes(getBinaryNodeChild(k, 'value')).toString('latin1'));
      }
      const skey = getBinaryNodeChild(node, 'skey');
      if (device && skey) this.setSignedPreKey(device, skey);
    } else if (xmlns === 'encrypt' && node.attrs.type === 'set' && getBinaryNodeChild(node, 'rotate')) {
      const skey = getBinaryNodeChild(getBinaryNodeChild(node, 'rotate'), 'skey');
      if (device && skey) this.setSignedPreKey(device, skey);
    } else if (xmlns === 'usync') {
      result.content = this.answerUsync(node);
    } else if (xmlns === 'w:m' && child?.tag === 'media_conn') {
      result.content = [
        { tag: 'media_conn', attrs: { auth: this.media.auth, ttl: '3600', auth_ttl: '21600', max_buckets: '12' }, content: [{ tag: 'host', attrs: { hostname: this.media.hostname, maxContentLengthBytes: '104857600' } }] },
      ];
    } else if (xmlns === 'privacy' && node.attrs.type === 'get' && child?.tag === 'privacy') {
      const all = ['readreceipts', 'last', 'online', 'profile', 'status', 'groupadd', 'calladd'];
      result.content = [{ tag: 'privacy', attrs: {}, content: all.map((name) => ({ tag: 'category', attrs: { name, value: name === 'calladd' ? 'all' : 'all' } })) }];
    } else if (xmlns === 'w:sync:app:state' && device && this.worldNow(device.account)) {
      result.content = this.answerAppState(device, this.worldNow(device.account)!, node);
    } else if (xmlns === 'w:sync:app:state') {
      // Nothing to sync: every collection stays at the version asked for, no patches, no snapshot.
      const collections = getBinaryNodeChildren(getBinaryNodeChild(node, 'sync'), 'collection');
      result.content = [{ tag: 'sync', attrs: {}, content: collections.map((c) => ({ tag: 'collection', attrs: { name: c.attrs.name ?? '', version: c.attrs.version ?? '0' } })) }];
    } else if (xmlns === 'w:g2') {
      return this.answerGroupIq(session, node, result);
    } else if (xmlns === 'md' && child?.tag === 'remove-companion-device') {
      // Logout: the device unlinks itself.
      if (device) {
        device.removed = true;
        this.devices.delete(device.key);
      }
    }
    return result;
  }

  private setSignedPreKey(device: Device, skey: BinaryNode): void {
    device.signedPreKey = { id: uint(getBinaryNodeChild(skey, 'id')), public: bytes(getBinaryNodeChild(skey, 'value')), signature: bytes(getBinaryNodeChild(skey, 'signature')) };
  }

  /** w:g2: one group's metadata (`<query>` to the group) or all the account's groups (`<participating>`). */
  private answerGroupIq(session: Session, node: BinaryNode, result: BinaryNode): BinaryNode {
    const account = session.device?.account;
    const child = children(node)[0];
    const to = node.attrs.to ?? '';
    result.attrs.from = to;
    if (child?.tag === 'participating') {
      const mine = [...this.groups.values()].filter((g) => account && g.hasAccount(account));
      result.content = [{ tag: 'groups', attrs: {}, content: mine.map((g) => g.toNode()) }];
      return result;
    }
    if (child?.tag === 'query') {
      const group = this.groups.get(to);
      if (group && account && group.hasAccount(account)) {
        result.content = [group.toNode()];
        return result;
      }
      return { tag: 'iq', attrs: { ...result.attrs, type: 'error' }, content: [{ tag: 'error', attrs: { code: group ? '403' : '404', text: group ? 'forbidden' : 'item-not-found' } }] };
    }
    return result;
  }

  // ---- messages, receipts and acks from the linked devices ----------------------------------

  /**
   * A `<message>` from a linked device: every `<to>` (and, in a group, the `skmsg`) addressed to a
   * simulated contact or to the account's phone is decrypted by it; the server then acks it
   * (`<ack class="message">`), as WhatsApp does once it accepted the stanza.
   */
  private async onClientMessage(session: Session, node: BinaryNode): Promise<void> {
    const device = session.device;
    if (!device) return;
    this.gatewayMessages.push(node);
    const to = node.attrs.to ?? '';
    const id = node.attrs.id ?? '';
    const rejection = this.rejections.shift();
    if (rejection !== undefined) {
      this.log(`rejecting message ${id} with error ${rejection}`);
      this.send(session, { tag: 'ack', attrs: { class: 'message', id, from: to, t: nowSeconds(), error: rejection } });
      return;
    }
    const participants = getBinaryNodeChildren(getBinaryNodeChild(node, 'participants'), 'to');
    /** Who a `<to jid>` is: a contact's or a phone's device 0 (linked devices, e.g. Baileys itself in a group's SKDM list, are not simulated). */
    const recipientOf = (jid: string | undefined): Contact | undefined => {
      if (!jid || jidDecode(jid)?.device) return undefined;
      const contact = this.contactByJid(jid);
      if (contact) return contact;
      const account = this.accountByJid(jid);
      return account ? this.phones.get(account.phone) : undefined;
    };
    const pairwise = new Map<Contact, BinaryNode>();
    for (const p of participants) {
      const r = recipientOf(p.attrs.jid);
      const enc = getBinaryNodeChild(p, 'enc');
      if (r && enc) pairwise.set(r, enc);
    }
    const topEncs = getBinaryNodeChildren(node, 'enc');
    this.linkedDevices.relay(device, node, participants);
    try {
      if (to.endsWith('@g.us')) {
        const group = this.groups.get(to);
        if (!group) {
          this.error(`message ${id} to unknown group ${to}`);
        } else {
          const skmsg = topEncs.find((e) => e.attrs.type === 'skmsg');
          const phones = group.accounts().flatMap((a) => this.phones.get(a.phone) ?? []);
          for (const member of [...group.contacts(), ...phones]) await this.decryptFor(member, device, node, pairwise.get(member), skmsg);
          // Whoever left must not read it (the sender rotated its key when they did).
          await this.groupOps.checkFormerMembers(group, device, node, skmsg);
        }
      } else if (to === 'status@broadcast') {
        // A status post: each audience member gets the sender key pairwise, then the skmsg.
        this.accountSide.statusPosts.push(node);
        const skmsg = topEncs.find((e) => e.attrs.type === 'skmsg');
        for (const [r, enc] of pairwise) await this.decryptFor(r, device, node, enc, skmsg);
      } else if (participants.length > 0) {
        const target = recipientOf(to);
        if (!target) this.error(`message ${id} to ${to}, who is not simulated`);
        for (const [r, enc] of pairwise) await this.decryptFor(r, device, node, enc, undefined);
      } else if (topEncs.length > 0) {
        // A peer message to its own phone, or a retry resend to one device: `<message to=DEVICE><enc count=…>`.
        const r = recipientOf(to);
        if (r) await this.decryptFor(r, device, node, topEncs[0], undefined);
      }
    } finally {
      this.send(session, { tag: 'ack', attrs: { class: 'message', id, from: to, t: nowSeconds() } });
    }
  }

  private async decryptFor(contact: Contact, device: Device, node: BinaryNode, pairwise: BinaryNode | undefined, skmsg: BinaryNode | undefined): Promise<void> {
    if (!pairwise && !skmsg) {
      this.error(`message ${node.attrs.id} has nothing for ${contact.phone}`);
      return;
    }
    try {
      const m = await contact.acceptFromGateway(device, node, pairwise, skmsg);
      this.log(`${contact.phone} decrypted ${m.id} (${m.encType}): ${JSON.stringify(m.text ?? Object.keys(m.message))}`);
    } catch (err) {
      this.error(`${contact.phone} could not decrypt ${node.attrs.id} from ${device.jid}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** A receipt from a linked device: acknowledges a message it received, or tells a contact it was delivered/read. */
  private onClientReceipt(session: Session, node: BinaryNode): void {
    const device = session.device;
    const ids = [node.attrs.id, ...getBinaryNodeChildren(getBinaryNodeChild(node, 'list'), 'item').map((i) => i.attrs.id)].filter((x): x is string => !!x);
    const to = node.attrs.to ?? '';
    if (node.attrs.type === 'server-error') {
      // Not about delivery: the device asks the phone to upload a message's media again.
      if (device) this.accountSide.answerMediaRetry(device, node);
      this.send(session, { tag: 'ack', attrs: { class: 'receipt', id: node.attrs.id ?? '', from: to, type: 'server-error' } });
      return;
    }
    if (device) this.settle(device, (n) => n.tag === 'message' && ids.includes(n.attrs.id ?? ''));
    const contact = to.endsWith('@g.us') ? this.contactByJid(node.attrs.participant ?? '') : this.contactByJid(to);
    if (node.attrs.type === 'retry') {
      // Baileys could not decrypt a contact's message: the contact answers it as a phone would.
      this.retried.add(node.attrs.id ?? '');
      if (!contact || !device || to.endsWith('@g.us')) this.error(`retry receipt for ${node.attrs.id} from ${to} that no simulated contact can answer`);
      else contact.acceptRetry(node, device).catch((err: unknown) => this.error(`${contact.phone} could not answer the retry for ${node.attrs.id}: ${err instanceof Error ? err.message : String(err)}`));
    } else {
      contact?.acceptReceipt(node);
    }
    // The server acknowledges receipts.
    this.send(session, { tag: 'ack', attrs: { class: 'receipt', id: node.attrs.id ?? '', from: to, ...(node.attrs.type ? { type: node.attrs.type } : {}) } });
  }

  /** An ack from a linked device for a stanza the double delivered. An `error` is a nack: recorded. */
  private onClientAck(session: Session, node: BinaryNode): void {
    const device = session.device;
    const { id, class: cls, error } = node.attrs;
    if (device) this.settle(device, (n) => n.tag === cls && n.attrs.id === id);
    // A nack after a retry receipt for the same message is how Baileys ends a failed decryption;
    // the retry is answered (see Contact.acceptRetry). Any other nack is an error.
    if (error && !(cls === 'message' && this.retried.has(id ?? ''))) this.error(`Baileys nacked ${cls} ${id} from ${node.attrs.to} with error ${error}`);
    else if (error) this.log(`Baileys nacked ${cls} ${id} after asking for a retry`);
  }

  private settle(device: Device, done: (n: BinaryNode) => boolean): void {
    for (let i = device.outbox.length - 1; i >= 0; i--) if (done(device.outbox[i]!)) device.outbox.splice(i, 1);
  }

  // ---- iq answers for the message path ------------------------------------------------------

  /** What a PN or LID JID names: a contact, a linked account, or nobody. */
  private whoIs(jid: string): { contact: Contact } | { account: Account } | undefined {
    const contact = this.contactByJid(jid);
    if (contact) return { contact };
    const account = this.accountByJid(jid);
    return account ? { account } : undefined;
  }

  /**
   * usync (`xmlns=usync`): per `<user>` the protocols the query asks for: `devices` (device 0 for
   * a contact, the linked devices with their key-index for the account), `lid` (the LID of a PN
   * user), `contact` (`in`/`out` for a phone number). Unknown users get empty answers.
   */
  private answerUsync(node: BinaryNode): BinaryNode[] {
    const usync = getBinaryNodeChild(node, 'usync');
    const protocols = children(getBinaryNodeChild(usync, 'query')).map((q) => q.tag);
    const users = getBinaryNodeChildren(getBinaryNodeChild(usync, 'list'), 'user');
    const out: BinaryNode[] = users.map((user) => {
      const phoneNode = getBinaryNodeChild(user, 'contact');
      const phone = phoneNode?.content instanceof Uint8Array ? Buffer.from(phoneNode.content).toString() : typeof phoneNode?.content === 'string' ? phoneNode.content : undefined;
      const jid = user.attrs.jid ?? (phone ? `${phone.replace(/^\+/, '')}@${S_WHATSAPP_NET}` : '');
      const who = this.whoIs(jid);
      const isLid = jid.endsWith('@lid');
      const content: BinaryNode[] = [];
      for (const protocol of protocols) {
        if (protocol === 'devices') {
          const list: BinaryNode[] = !who
            ? []
            : 'contact' in who
              ? [{ tag: 'device', attrs: { id: '0' } }]
              : [
                  // The phone, then the linked devices (non-zero devices need their key-index).
                  ...(this.phones.has(who.account.phone) ? [{ tag: 'device', attrs: { id: '0' } }] : []),
                  ...this.devicesOf(who.account).map((d) => ({ tag: 'device', attrs: { id: String(d.deviceId), 'key-index': String(d.deviceId) } })),
                ];
          content.push({ tag: 'devices', attrs: {}, content: [{ tag: 'device-list', attrs: {}, content: list }] });
        } else if (protocol === 'lid') {
          if (who && !isLid) content.push({ tag: 'lid', attrs: { val: 'contact' in who ? who.contact.lid : `${who.account.lidUser}@lid` } });
        } else if (protocol === 'contact') {
          content.push({ tag: 'contact', attrs: { type: who ? 'in' : 'out' } });
        } else if (protocol === 'status') {
          content.push(this.accountSide.usyncStatus(jid));
        }
      }
      return { tag: 'user', attrs: { jid }, content };
    });
    return [{ tag: 'usync', attrs: { ...usync?.attrs }, content: [{ tag: 'result', attrs: {} }, { tag: 'list', attrs: {}, content: out }] }];
  }

  /** `<iq xmlns=encrypt type=get><key>`: a pre-key bundle per known device (unknown ones are left out, as an `<error>` would fail the whole fetch). */
  private answerKeyFetch(node: BinaryNode): BinaryNode[] {
    const users = getBinaryNodeChildren(getBinaryNodeChild(node, 'key'), 'user');
    const list: BinaryNode[] = [];
    for (const user of users) {
      const jid = user.attrs.jid ?? '';
      const decoded = jidDecode(jid);
      const who = this.whoIs(jid);
      let bundle: Bundle | undefined;
      if (who && 'contact' in who && !decoded?.device) bundle = who.contact.device.takeBundle();
      else if (who && 'account' in who) {
        const phone = this.phones.get(who.account.phone);
        const device = this.devicesOf(who.account).find((d) => d.deviceId === (decoded?.device ?? 0));
        if (!decoded?.device && phone) bundle = phone.device.takeBundle();
        else if (device) bundle = this.bundleOf(device);
      }
      if (!bundle) {
        this.log(`key fetch for unknown device ${jid}: left out`);
        continue;
      }
      const content: BinaryNode[] = [
        { tag: 'registration', attrs: {}, content: be(bundle.registrationId, 4) },
        { tag: 'type', attrs: {}, content: Buffer.from([5]) },
        { tag: 'identity', attrs: {}, content: bundle.identity },
        {
          tag: 'skey',
          attrs: {},
          content: [
            { tag: 'id', attrs: {}, content: be(bundle.signedPreKey.id, 3) },
            { tag: 'value', attrs: {}, content: bundle.signedPreKey.public },
            { tag: 'signature', attrs: {}, content: bundle.signedPreKey.signature },
          ],
        },
      ];
      if (bundle.preKey) {
        content.push({ tag: 'key', attrs: {}, content: [{ tag: 'id', attrs: {}, content: be(bundle.preKey.id, 3) }, { tag: 'value', attrs: {}, content: bundle.preKey.public }] });
      }
      list.push({ tag: 'user', attrs: { jid }, content });
    }
    return [{ tag: 'list', attrs: {}, content: list }];
  }

  // ---- sending ------------------------------------------------------------------------------

  private iqId(): string {
    return `double.${this.nextIqId++}`;
  }

  send(session: Session, node: BinaryNode): void {
    if (!session.open) return;
    if (this.logging) this.log(`#${session.id} -> ${binaryNodeToString(node).slice(0, 400)}`);
    session.socket.send(encodeFrame(session.noise.encryptFrame(encodeBinaryNode(node))));
  }

  /** Sends an iq and resolves with the client's answer to it (5 s limit). */
  request(session: Session, node: BinaryNode, timeoutMs = 5000): Promise<BinaryNode> {
    const id = node.attrs.id!;
    return new Promise<BinaryNode>((resolve, reject) => {
      const timer = setTimeout(() => {
        session.pending.delete(id);
        reject(new Error(`no answer to iq ${id} in ${timeoutMs} ms`));
      }, timeoutMs);
      session.pending.set(id, {
        resolve: (n) => {
          clearTimeout(timer);
          resolve(n);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.send(session, node);
    });
  }

  /**
   * Sends a stream error and leaves the closing to the client, as WhatsApp does: closing right
   * away could make Baileys see the close (428) before it decoded the error. A session the client
   * did not close within 2 s is dropped.
   */
  private sendStreamError(sessions: Session[], node: BinaryNode): void {
    for (const s of sessions) {
      this.send(s, node);
      const timer = setTimeout(() => {
        if (!s.closed) s.socket.terminate();
      }, 2000);
      timer.unref();
    }
  }
}
