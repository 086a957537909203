import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import {
  binaryNodeToString,
  Curve,
  decodeBinaryNode,
  encodeBinaryNode,
  getBinaryNodeChild,
  getBinaryNodeChildren,
  proto,
  type BinaryNode,
  type KeyPair,
} from '@whiskeysockets/baileys';
import { makeCertChain } from './cert.js';
import { encodeFrame, FrameReader, NoiseResponder } from './noise.js';
import { buildPairSuccess, parseQr, verifyPairDeviceSign, type Account, type Device } from './phone.js';
import { WebSocketServer, WS_OPEN, type WsServer, type WsSocket } from './ws.js';

export type { Account, Device } from './phone.js';

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
  /** Debug sink for a line per event and decoded stanza (or set PROTOCOL_DOUBLE_DEBUG=1). */
  log?: (line: string) => void;
}

export type SessionKind = 'registration' | 'login';

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
  /** Sent `<failure/>` (rejected login). */
  failedWith: string | null = null;
  closed = false;
  closeCode: number | null = null;
  /** Stop answering anything (the keepalive fault). */
  silent = false;
  /** Every stanza received after the handshake. */
  readonly received: BinaryNode[] = [];

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
export class ProtocolDouble {
  readonly sessions: Session[] = [];
  /** Paired devices by `user:device` (the login lookup key). */
  readonly devices = new Map<string, Device>();
  readonly accounts = new Map<string, Account>();
  /** Uploaded one-time pre-key ids by device key. */
  readonly preKeys = new Map<string, number[]>();

  refs: number;
  assumedPreKeys: number;
  sendOffline: boolean;
  /** Registrations still to be answered with an empty pair-device (refs exhausted at once). */
  private exhaustedRefs = 0;

  private readonly staticKey: KeyPair = Curve.generateKeyPair();
  private readonly certChain: Uint8Array;
  private readonly defaultPhone: string;
  private readonly log: (line: string) => void;
  private nextSessionId = 1;
  private nextIqId = 1;

  private constructor(
    private readonly wss: WsServer,
    readonly port: number,
    options: ProtocolDoubleOptions,
  ) {
    this.refs = options.refs ?? 6;
    this.assumedPreKeys = options.assumedPreKeys ?? 30;
    this.sendOffline = options.sendOffline ?? true;
    this.defaultPhone = options.phone ?? '15550000001';
    this.certChain = makeCertChain(this.staticKey.public);
    const debug = process.env.PROTOCOL_DOUBLE_DEBUG === '1' ? (line: string) => console.error(`[double] ${line}`) : () => undefined;
    this.log = options.log ?? debug;
    wss.on('connection', (socket) => this.accept(socket));
  }

  static async start(options: ProtocolDoubleOptions = {}): Promise<ProtocolDouble> {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, path: '/ws/chat' });
    await new Promise<void>((resolve, reject) => {
      wss.on('listening', resolve);
      wss.on('error', reject);
    });
    const address = wss.address() as AddressInfo;
    return new ProtocolDouble(wss, address.port, options);
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
  }

  // ---- the phone ----------------------------------------------------------------------------

  /**
   * Plays the phone scanning `qr` (Baileys' QR string): sends pair-success with a device identity
   * signed by the account key and HMAC'd with the QR's adv secret, waits for Baileys' signed
   * reply and checks its device signature, then restarts the stream with 515 as WhatsApp does.
   * Resolves with the new device once Baileys' reply checked out.
   */
  async scan(qr: string, options: { phone?: string; restart?: boolean } = {}): Promise<Device> {
    const parsed = parseQr(qr);
    const session = this.sessions.find((s) => s.refs.includes(parsed.ref));
    if (!session) throw new Error(`scan: no session issued ref ${parsed.ref}`);
    if (!session.ready) throw new Error(`scan: the session that issued ref ${parsed.ref} is no longer open`);
    if (!session.clientStatic?.equals(parsed.noiseKey)) throw new Error('scan: the QR noise key is not the one the client used in its handshake');
    const pairing = session.payload?.devicePairingData;
    if (!pairing?.eIdent || !Buffer.from(pairing.eIdent).equals(parsed.identityKey)) {
      throw new Error('scan: the QR identity key is not the one the client registered');
    }
    const account = this.account(options.phone);
    const deviceId = account.nextDeviceId++;
    const device: Device = {
      jid: `${account.phone}:${deviceId}@${S_WHATSAPP_NET}`,
      lid: `${account.lidUser}:${deviceId}@lid`,
      key: `${account.phone}:${deviceId}`,
      account,
      deviceId,
      noiseKey: parsed.noiseKey,
      identityKey: parsed.identityKey,
      registrationId: pairing.eRegid ? Buffer.from(pairing.eRegid).readUIntBE(0, pairing.eRegid.length) : 0,
      signedPreKey: {
        id: pairing.eSkeyId ? Buffer.from(pairing.eSkeyId).readUIntBE(0, pairing.eSkeyId.length) : 0,
        public: Buffer.from(pairing.eSkeyVal ?? []),
        signature: Buffer.from(pairing.eSkeySig ?? []),
      },
      removed: false,
    };
    const { node, details } = buildPairSuccess(this.iqId(), device, parsed.advSecret);
    const reply = await this.request(session, node);
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
      session.closeCode = code;
      for (const p of session.pending.values()) p.reject(new Error('connection closed'));
      session.pending.clear();
      this.log(`#${session.id} closed (${code})`);
    });
    socket.on('error', (err) => this.log(`#${session.id} socket error: ${err.message}`));
  }

  private async onData(session: Session, data: Buffer): Promise<void> {
    for (const frame of session.reader.push(data)) {
      if (session.noise.ready) {
        const plain = session.noise.decryptFrame(frame);
        const node = await decodeBinaryNode(plain);
        this.log(`#${session.id} <- ${binaryNodeToString(node).slice(0, 400)}`);
        session.received.push(node);
        this.onNode(session, node);
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
    this.send(session, {
      tag: 'success',
      attrs: { t: String(Math.floor(Date.now() / 1000)), lid: device.lid, location: 'double', props: '1', abprops: '1', creation: String(Math.floor(Date.now() / 1000)) },
    });
    if (this.sendOffline) {
      this.send(session, { tag: 'ib', attrs: { from: S_WHATSAPP_NET }, content: [{ tag: 'offline', attrs: { count: '0' } }] });
    }
  }

  private onNode(session: Session, node: BinaryNode): void {
    if (session.silent) return;
    if (node.tag !== 'iq') return;
    const id = node.attrs.id;
    if (node.attrs.type === 'result' || node.attrs.type === 'error') {
      const waiter = id === undefined ? undefined : session.pending.get(id);
      if (waiter && id !== undefined) {
        session.pending.delete(id);
        waiter.resolve(node);
      }
      return;
    }
    this.send(session, this.answerIq(session, node));
  }

  /** A generic, well-formed answer to the iq queries Baileys makes around login. */
  private answerIq(session: Session, node: BinaryNode): BinaryNode {
    const result: BinaryNode = { tag: 'iq', attrs: { from: S_WHATSAPP_NET, type: 'result', id: node.attrs.id ?? '' } };
    const xmlns = node.attrs.xmlns;
    const child = Array.isArray(node.content) ? node.content[0] : undefined;
    const deviceKey = session.device?.key;
    if (xmlns === 'encrypt' && child?.tag === 'count') {
      const uploaded = deviceKey ? (this.preKeys.get(deviceKey)?.length ?? 0) : 0;
      result.content = [{ tag: 'count', attrs: { value: String(uploaded || this.assumedPreKeys) } }];
    } else if (xmlns === 'encrypt' && child?.tag === 'digest') {
      result.content = [{ tag: 'digest', attrs: {} }];
    } else if (xmlns === 'encrypt' && node.attrs.type === 'set' && getBinaryNodeChild(node, 'list')) {
      const ids = getBinaryNodeChildren(getBinaryNodeChild(node, 'list'), 'key').map((k) => {
        const idNode = getBinaryNodeChild(k, 'id');
        return idNode?.content instanceof Uint8Array ? Buffer.from(idNode.content).readUIntBE(0, idNode.content.length) : 0;
      });
      if (deviceKey) this.preKeys.set(deviceKey, [...(this.preKeys.get(deviceKey) ?? []), ...ids]);
    } else if (xmlns === 'md' && child?.tag === 'remove-companion-device') {
      // Logout: the device unlinks itself.
      const device = session.device;
      if (device) {
        device.removed = true;
        this.devices.delete(device.key);
      }
    }
    return result;
  }

  // ---- sending ------------------------------------------------------------------------------

  private iqId(): string {
    return `double.${this.nextIqId++}`;
  }

  send(session: Session, node: BinaryNode): void {
    if (!session.open) return;
    this.log(`#${session.id} -> ${binaryNodeToString(node).slice(0, 400)}`);
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
