import { randomBytes } from 'node:crypto';
import {
  Curve,
  DEFAULT_CONNECTION_CONFIG,
  encodeWAMessage,
  getBinaryNodeChild,
  initAuthCreds,
  proto,
  unpadRandomMax16,
  type AuthenticationCreds,
  type BinaryNode,
  type SignalKeyStoreWithTransaction,
  type SignalRepositoryWithLIDStore,
} from '@whiskeysockets/baileys';
import { pino } from 'pino';
import { transactionalMemoryKeys } from './keys.js';
import { routeLibsignalConsole } from '../../src/connection/baileys/libsignal-console.js';
import { decryptMedia, encryptMedia, type MediaHost, type MediaKind } from './media.js';
import type { Account, Device } from './phone.js';

const silent = pino({ level: 'silent' });

// libsignal prints whole session records with console.info/console.warn when a session gives way
// to a newer one, which is routine here (Baileys force-refreshes sessions for every LID a usync
// returns, the phone's own included). The simulated devices run in this process: their libsignal
// lines go where the gateway's go, through the same routing (here a silent log).
routeLibsignalConsole(silent);

/** A Signal pre-key bundle as the server hands it out (`<iq xmlns=encrypt type=get>` answer). */
export interface Bundle {
  registrationId: number;
  /** 32-byte identity public key. */
  identity: Buffer;
  signedPreKey: { id: number; public: Buffer; signature: Buffer };
  preKey?: { id: number; public: Buffer };
}

/**
 * One simulated Signal device (a contact's phone): identity, signed pre-key, one-time pre-keys,
 * and Baileys' own Signal repository over an in-memory store (the same libsignal Baileys uses).
 */
export class SignalDevice {
  readonly creds: AuthenticationCreds = initAuthCreds();
  readonly keys: SignalKeyStoreWithTransaction = transactionalMemoryKeys();
  readonly repo: SignalRepositoryWithLIDStore;
  /** One-time pre-keys not yet handed out. */
  private readonly freePreKeys: Array<{ id: number; public: Buffer }> = [];

  private constructor() {
    this.repo = DEFAULT_CONNECTION_CONFIG.makeSignalRepository({ creds: this.creds, keys: this.keys }, silent, async () => []);
  }

  static async create(preKeys: number): Promise<SignalDevice> {
    const d = new SignalDevice();
    const update: Record<string, { public: Uint8Array; private: Uint8Array }> = {};
    for (let id = 1; id <= preKeys; id++) {
      const pair = Curve.generateKeyPair();
      update[String(id)] = pair;
      d.freePreKeys.push({ id, public: Buffer.from(pair.public) });
    }
    await d.keys.set({ 'pre-key': update });
    return d;
  }

  /** The bundle the server gives to whoever fetches this device's keys; consumes a one-time pre-key. */
  takeBundle(): Bundle {
    const { creds } = this;
    const preKey = this.freePreKeys.shift();
    return {
      registrationId: creds.registrationId,
      identity: Buffer.from(creds.signedIdentityKey.public),
      signedPreKey: { id: creds.signedPreKey.keyId, public: Buffer.from(creds.signedPreKey.keyPair.public), signature: Buffer.from(creds.signedPreKey.signature) },
      ...(preKey ? { preKey } : {}),
    };
  }

  get preKeysLeft(): number {
    return this.freePreKeys.length;
  }
}

/** What a contact needs from the double's server. */
export interface ContactWire {
  readonly media: MediaHost;
  /** The account a PN or LID JID names (any device suffix ignored). */
  accountByJid(jid: string): Account | undefined;
  /** The account's devices that are linked (not removed). */
  devicesOf(account: Account): Device[];
  groupByJid(jid: string): GroupLike | undefined;
  /** A linked device's bundle (consumes one of its uploaded pre-keys). */
  bundleOf(device: Device): Bundle;
  /** Queues a stanza for a linked device (sent now if it is online, else at its next login). */
  deliver(device: Device, node: BinaryNode): void;
  logLine(line: string): void;
}

/** The part of a group a contact writes into. */
export interface GroupLike {
  jid: string;
  addressingMode: 'lid' | 'pn';
  accounts(): Account[];
  has(contact: Contact): boolean;
}

export interface ContactOptions {
  /** Push name (`notify`). Default "Contact <phone>". */
  name?: string;
  /** LID user (digits). Default derived from the phone. */
  lid?: string;
  /**
   * How its 1:1 messages are addressed: `pn` (`from` = phone JID) or `lid` (`from` = LID, as
   * WhatsApp does for people who hide their number or after the LID migration). Default `pn`.
   */
  addressing?: 'pn' | 'lid';
  /**
   * Whether stanzas carry the other address too (`sender_lid` with PN addressing, `sender_pn` /
   * `participant_pn` and group `phone_number` with LID addressing): the LID<->PN mapping WhatsApp
   * gives. Default true. `addressing: 'lid', alt: false` is a LID sender whose number the gateway
   * cannot learn.
   */
  alt?: boolean;
  /** One-time pre-keys the contact's device starts with (default 5; bundles go without once used up). */
  preKeys?: number;
}

export type ReceiptType = 'delivery' | 'read' | 'played';

/** What a contact can send as media (`ptt`: a voice note, `ptv`: a round video note). */
export type ContactMediaKind = 'image' | 'video' | 'audio' | 'document' | 'ptt' | 'sticker' | 'ptv';

/** The stanza's `<enc mediatype>` per kind (WhatsApp's names). */
const MEDIATYPE: Record<ContactMediaKind, string> = { image: 'image', video: 'video', audio: 'audio', document: 'document', ptt: 'ptt', sticker: 'sticker', ptv: 'ptv' };

/** A message the gateway sent to a contact, as the contact decrypted it. */
export interface ContactMessage {
  id: string;
  /** The chat: the JID the gateway addressed (the contact's PN or LID) or the group. */
  chat: string;
  isGroup: boolean;
  /** The gateway device that sent it (`PHONE:N@s.whatsapp.net`). */
  sender: Device;
  /** The stanza's `type` (text, media, reaction, poll, …). */
  type: string;
  /** How the content came: pairwise (`pkmsg`/`msg`) or with the group's sender key (`skmsg`). */
  encType: 'pkmsg' | 'msg' | 'skmsg';
  message: proto.IMessage;
  /** The text or caption, if any. */
  text: string | undefined;
  stanza: BinaryNode;
}

/** A receipt the gateway sent to a contact (delivery after decrypting, read marks). */
export interface GatewayReceipt {
  ids: string[];
  /** `undefined` = delivered while online; `inactive`, `read`, `read-self`, `played`, … */
  type: string | undefined;
  to: string;
  participant: string | undefined;
  stanza: BinaryNode;
}

/** A chat state (`typing…`) the gateway sent to a contact. */
export interface ChatState {
  state: string;
  /** `audio` for "recording audio…" (`<composing media="audio"/>`). */
  media?: string;
  from: string;
  to: string;
}

export function newStanzaId(): string {
  return `3A${randomBytes(9).toString('hex').toUpperCase()}`;
}

function textOf(m: proto.IMessage): string | undefined {
  return (
    m.conversation ??
    m.extendedTextMessage?.text ??
    m.imageMessage?.caption ??
    m.videoMessage?.caption ??
    m.documentMessage?.caption ??
    m.ephemeralMessage?.message?.conversation ??
    m.ephemeralMessage?.message?.extendedTextMessage?.text ??
    undefined
  );
}

/** A waiting list: push() values, next() takes them in order (waiting up to a limit). */
class Inbox<T> {
  readonly all: T[] = [];
  private read = 0;
  private readonly waiters: Array<(v: T) => void> = [];

  push(v: T): void {
    this.all.push(v);
    const w = this.waiters.shift();
    if (w) {
      this.read += 1;
      w(v);
    }
  }

  next(ms: number, what: string): Promise<T> {
    if (this.read < this.all.length) return Promise.resolve(this.all[this.read++]!);
    return new Promise<T>((resolve, reject) => {
      const waiter = (v: T) => {
        clearTimeout(timer);
        resolve(v);
      };
      const timer = setTimeout(() => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(new Error(`no ${what} within ${ms} ms`));
      }, ms);
      this.waiters.push(waiter);
    });
  }
}

/**
 * A simulated WhatsApp user with one phone (device 0): writes to the gateway's account and into
 * groups (Signal-encrypted per gateway device, sender keys in groups), decrypts what the gateway
 * sends it, sends receipts on demand, uploads and downloads media through the media host.
 */
export class Contact {
  readonly phone: string;
  readonly name: string;
  readonly lidUser: string;
  readonly addressing: 'pn' | 'lid';
  readonly alt: boolean;
  /** Messages the gateway sent to this contact, decrypted, in arrival order. */
  private readonly inbox = new Inbox<ContactMessage>();
  private readonly receiptBox = new Inbox<GatewayReceipt>();
  readonly chatStates: ChatState[] = [];
  /** Group + gateway device pairs that already have this contact's sender key. */
  private readonly senderKeySent = new Set<string>();
  /** 1:1 messages this contact sent (stanza attributes and plaintext), kept to answer retry receipts. */
  private readonly sent = new Map<string, { attrs: Record<string, string>; data: Uint8Array; mediatype: string | undefined }>();
  /** Retry receipts the gateway sent this contact, and how each was answered. */
  readonly retries: Array<{ id: string; count: number; withKeys: boolean; answer: 'same-session' | 'new-session-from-receipt' | 'new-session-from-server' }> = [];

  constructor(
    private readonly wire: ContactWire,
    /** `+` and digits. */
    phone: string,
    readonly device: SignalDevice,
    options: ContactOptions,
  ) {
    this.phone = phone;
    this.name = options.name ?? `Contact ${phone}`;
    this.lidUser = options.lid ?? `${200_000_000_000_000 + Number(phone.slice(-9))}`;
    this.addressing = options.addressing ?? 'pn';
    this.alt = options.alt ?? true;
  }

  /** `DIGITS@s.whatsapp.net` */
  get jid(): string {
    return `${this.phone.slice(1)}@s.whatsapp.net`;
  }

  /** `LID@lid` */
  get lid(): string {
    return `${this.lidUser}@lid`;
  }

  /** The address this contact writes from in 1:1 chats (what the gateway sees as the sender). */
  get address(): string {
    return this.addressing === 'lid' ? this.lid : this.jid;
  }

  /** True when WhatsApp would not tell the gateway this contact's number (LID without `sender_pn`). */
  get hidesPhone(): boolean {
    return this.addressing === 'lid' && !this.alt;
  }

  /** Every message the gateway sent to this contact so far. */
  get messages(): readonly ContactMessage[] {
    return this.inbox.all;
  }

  /** Receipts the gateway sent to this contact so far. */
  get receiptsFromGateway(): readonly GatewayReceipt[] {
    return this.receiptBox.all;
  }

  /** The next message the gateway sent to this contact (waits up to `ms`). */
  nextMessage(ms = 10_000): Promise<ContactMessage> {
    return this.inbox.next(ms, `message for ${this.phone}`);
  }

  /** The next receipt the gateway sent to this contact (waits up to `ms`). */
  nextReceipt(ms = 10_000): Promise<GatewayReceipt> {
    return this.receiptBox.next(ms, `receipt for ${this.phone}`);
  }

  // ---- writing ----------------------------------------------------------------------------------

  /** A text to `to` (the account's PN or LID JID, or a group JID); resolves with the message id. */
  sendText(to: string, text: string, options: { quoted?: ContactMessage; id?: string } = {}): Promise<string> {
    const message: proto.IMessage = options.quoted
      ? { extendedTextMessage: { text, contextInfo: this.quoteContext(options.quoted) } }
      : { conversation: text };
    return this.send(to, message, { type: 'text', ...(options.id ? { id: options.id } : {}) });
  }

  /** An image (encrypted and stored on the media host as a phone would upload it); resolves with the message id. */
  sendImage(to: string, bytes: Uint8Array, options: { caption?: string; mimetype?: string; id?: string } = {}): Promise<string> {
    return this.sendMedia(to, bytes, 'image', { mimetype: options.mimetype ?? 'image/png', ...options });
  }

  /**
   * Any media kind; `image`, `video`, `audio` and `document` map to their message types, `ptt` is a
   * voice note (audioMessage with ptt), `sticker` a stickerMessage, `ptv` a round video (ptvMessage).
   */
  async sendMedia(to: string, bytes: Uint8Array, kind: ContactMediaKind, options: { mimetype: string; caption?: string; fileName?: string; id?: string }): Promise<string> {
    const { message } = this.mediaMessage(bytes, kind, options);
    return this.send(to, message, { type: 'media', mediatype: MEDIATYPE[kind], ...(options.id ? { id: options.id } : {}) });
  }

  /** Encrypts and stores a file on the media host as a phone uploads it; the message that points at it, and where it is. */
  mediaMessage(bytes: Uint8Array, kind: ContactMediaKind, options: { mimetype: string; caption?: string; fileName?: string }): { message: proto.IMessage; directPath: string } {
    const cryptoKind: MediaKind = kind === 'ptv' ? 'video' : kind;
    const enc = encryptMedia(bytes, cryptoKind);
    const stored = this.wire.media.put(enc.file, cryptoKind);
    const common = {
      url: stored.url,
      directPath: stored.directPath,
      mediaKey: enc.mediaKey,
      fileEncSha256: enc.fileEncSha256,
      fileSha256: enc.fileSha256,
      fileLength: enc.fileLength,
      mediaKeyTimestamp: Math.floor(Date.now() / 1000),
      mimetype: options.mimetype,
    };
    const caption = options.caption !== undefined ? { caption: options.caption } : {};
    const message: proto.IMessage =
      kind === 'image'
        ? { imageMessage: { ...common, ...caption } }
        : kind === 'video'
          ? { videoMessage: { ...common, ...caption } }
          : kind === 'ptv'
            ? { ptvMessage: common }
            : kind === 'audio'
              ? { audioMessage: common }
              : kind === 'ptt'
                ? { audioMessage: { ...common, ptt: true } }
                : kind === 'sticker'
                  ? { stickerMessage: common }
                  : { documentMessage: { ...common, ...caption, fileName: options.fileName ?? 'file' } };
    return { message, directPath: stored.directPath };
  }

  /** A 1:1 message this contact sent, as it sent it (for the double's phone-side answers, e.g. media re-upload). */
  sentMessage(id: string): proto.IMessage | undefined {
    const sent = this.sent.get(id);
    return sent ? proto.Message.decode(unpadRandomMax16(sent.data)) : undefined;
  }

  /** A reaction to a message in `to`'s chat (`fromMe` from this contact's point of view). */
  react(to: string, target: { id: string; fromMe: boolean; participant?: string }, emoji: string): Promise<string> {
    const key = { remoteJid: to, id: target.id, fromMe: target.fromMe, ...(target.participant ? { participant: target.participant } : {}) };
    return this.send(to, { reactionMessage: { key, text: emoji, senderTimestampMs: Date.now() } }, { type: 'reaction' });
  }

  /** Edits a text this contact sent. */
  edit(to: string, targetId: string, text: string): Promise<string> {
    return this.send(
      to,
      {
        protocolMessage: {
          key: { remoteJid: to, fromMe: true, id: targetId },
          type: proto.Message.ProtocolMessage.Type.MESSAGE_EDIT,
          editedMessage: { conversation: text },
          timestampMs: Date.now(),
        },
      },
      { type: 'text' },
    );
  }

  /** Deletes for everyone a message this contact sent. */
  revoke(to: string, targetId: string): Promise<string> {
    return this.send(to, { protocolMessage: { key: { remoteJid: to, fromMe: true, id: targetId }, type: proto.Message.ProtocolMessage.Type.REVOKE } }, { type: 'text' });
  }

  /**
   * Sends `message` to `to`: 1:1 to the account's every linked device (one Signal session each,
   * started from the device's bundle when there is none), or into a group (sender key; the key
   * itself pairwise to each gateway device that does not have it yet).
   */
  async send(
    to: string,
    message: proto.IMessage,
    options: { type: string; mediatype?: string; id?: string; devices?: Device[]; attrs?: Record<string, string> },
  ): Promise<string> {
    const id = options.id ?? newStanzaId();
    const t = String(Math.floor(Date.now() / 1000));
    const group = this.wire.groupByJid(to);
    const encAttrs = (type: string): Record<string, string> => ({ v: '2', type, ...(options.mediatype ? { mediatype: options.mediatype } : {}) });
    if (group) {
      if (!group.has(this)) throw new Error(`${this.phone} is not in ${to}`);
      const { ciphertext, senderKeyDistributionMessage } = await this.device.repo.encryptGroupMessage({ group: group.jid, meId: this.lid, data: encodeWAMessage(message) });
      const lidMode = group.addressingMode === 'lid';
      const attrs: Record<string, string> = {
        from: group.jid,
        participant: lidMode ? this.lid : this.jid,
        addressing_mode: group.addressingMode,
        id,
        t,
        type: options.type,
        notify: this.name,
      };
      if (lidMode && !this.hidesPhone) attrs.participant_pn = this.jid;
      if (!lidMode) attrs.participant_lid = this.lid;
      for (const account of group.accounts()) {
        const devices = options.devices ? options.devices.filter((d) => d.account === account) : this.wire.devicesOf(account);
        for (const device of devices) {
          const content: BinaryNode[] = [];
          const memo = `${group.jid}|${device.key}`;
          if (!this.senderKeySent.has(memo)) {
            const skdm: proto.IMessage = { senderKeyDistributionMessage: { groupId: group.jid, axolotlSenderKeyDistributionMessage: senderKeyDistributionMessage } };
            const pairwise = await this.encryptFor(device, encodeWAMessage(skdm));
            content.push({ tag: 'enc', attrs: encAttrs(pairwise.type), content: pairwise.ciphertext });
            this.senderKeySent.add(memo);
          }
          content.push({ tag: 'enc', attrs: encAttrs('skmsg'), content: ciphertext });
          this.wire.deliver(device, { tag: 'message', attrs, content });
        }
      }
      this.wire.logLine(`${this.phone} -> ${to} ${options.type} ${id}`);
      return id;
    }
    const account = this.wire.accountByJid(to);
    if (!account) throw new Error(`${this.phone} cannot write to ${to}: no such account on the double`);
    const attrs: Record<string, string> = { from: this.address, id, t, type: options.type, notify: this.name, ...options.attrs };
    if (this.alt) {
      if (this.addressing === 'pn') attrs.sender_lid = this.lid;
      else attrs.sender_pn = this.jid;
    }
    const devices = options.devices ?? this.wire.devicesOf(account);
    if (devices.length === 0) throw new Error(`${to} has no linked device`);
    const data = encodeWAMessage(message);
    this.sent.set(id, { attrs, data, mediatype: options.mediatype });
    for (const device of devices) {
      const { type, ciphertext } = await this.encryptFor(device, data);
      this.wire.deliver(device, { tag: 'message', attrs, content: [{ tag: 'enc', attrs: encAttrs(type), content: ciphertext }] });
    }
    this.wire.logLine(`${this.phone} -> ${to} ${options.type} ${id}`);
    return id;
  }

  /** Delivery, read or played receipt(s) for message(s) the gateway sent this contact. */
  receipt(messages: string | ContactMessage | Array<string | ContactMessage>, type: ReceiptType = 'delivery'): void {
    const list = (Array.isArray(messages) ? messages : [messages]).map((m) => (typeof m === 'string' ? this.received(m) : m));
    const first = list[0];
    if (!first) throw new Error('receipt: no message');
    const attrs: Record<string, string> = { id: first.id, t: String(Math.floor(Date.now() / 1000)) };
    if (first.isGroup) {
      const group = this.wire.groupByJid(first.chat);
      attrs.from = first.chat;
      attrs.participant = group?.addressingMode === 'pn' ? this.jid : this.lid;
    } else {
      // The receipt comes from the chat the gateway wrote to, as it wrote it (PN or LID).
      attrs.from = first.chat;
    }
    if (type !== 'delivery') attrs.type = type;
    const rest = list.slice(1);
    const node: BinaryNode = {
      tag: 'receipt',
      attrs,
      ...(rest.length > 0 ? { content: [{ tag: 'list', attrs: {}, content: rest.map((m) => ({ tag: 'item', attrs: { id: m.id } })) }] } : {}),
    };
    for (const device of this.wire.devicesOf(first.sender.account)) this.wire.deliver(device, node);
    this.wire.logLine(`${this.phone} receipt ${type} ${list.map((m) => m.id).join(',')}`);
  }

  /** A message the gateway sent this contact, by id. */
  received(id: string): ContactMessage {
    const m = this.inbox.all.find((x) => x.id === id);
    if (!m) throw new Error(`${this.phone} never received ${id}`);
    return m;
  }

  /** Downloads (from the media host), checks and decrypts the media of a message the gateway sent. */
  download(m: ContactMessage | proto.IMessage): Buffer {
    const message = 'message' in m && 'stanza' in m ? m.message : (m as proto.IMessage);
    const kinds: Array<[MediaKind, proto.Message.IImageMessage | proto.Message.IVideoMessage | proto.Message.IAudioMessage | proto.Message.IDocumentMessage | null | undefined]> = [
      ['image', message.imageMessage],
      ['video', message.videoMessage],
      ['audio', message.audioMessage],
      ['document', message.documentMessage],
      ['sticker', message.stickerMessage],
      ['video', message.ptvMessage],
    ];
    const found = kinds.find(([, v]) => v);
    if (!found) throw new Error('download: not a media message');
    const [kind, media] = found;
    const path = media!.directPath ?? media!.url;
    if (!path || !media!.mediaKey) throw new Error('download: no directPath/url or mediaKey');
    const stored = this.wire.media.get(path);
    if (!stored) throw new Error(`download: nothing stored at ${path}`);
    return decryptMedia(stored.bytes, media!.mediaKey, kind, { fileEncSha256: media!.fileEncSha256, fileSha256: media!.fileSha256, fileLength: media!.fileLength == null ? null : Number(media!.fileLength) });
  }

  // ---- what the server hands the contact ----------------------------------------------------

  /**
   * A `<message>` the gateway sent that has something for this contact: `pairwise` is the `<enc>`
   * of the contact's `<to>` (absent in a group when the contact already has the sender key), and
   * `skmsg` the group ciphertext. Throws when decryption fails.
   */
  async acceptFromGateway(sender: Device, stanza: BinaryNode, pairwise: BinaryNode | undefined, skmsg: BinaryNode | undefined): Promise<ContactMessage> {
    const chat = stanza.attrs.to!;
    const isGroup = chat.endsWith('@g.us');
    const group = isGroup ? this.wire.groupByJid(chat) : undefined;
    // The address the contact keeps the gateway device's session and sender key under: its LID
    // (how Baileys encrypts in LID-mode groups and what it decrypts with), or its PN in PN groups.
    const senderAddress = group?.addressingMode === 'pn' ? sender.jid : sender.lid;
    const pairAddress = sender.lid;
    let message: proto.IMessage | undefined;
    let encType: ContactMessage['encType'] = 'skmsg';
    if (pairwise) {
      const type = pairwise.attrs.type;
      if (type !== 'pkmsg' && type !== 'msg') throw new Error(`unexpected pairwise enc type ${String(type)}`);
      encType = type;
      const plain = await this.device.repo.decryptMessage({ jid: pairAddress, type, ciphertext: pairwise.content as Uint8Array });
      message = proto.Message.decode(unpadRandomMax16(plain));
      if (message.senderKeyDistributionMessage) {
        await this.device.repo.processSenderKeyDistributionMessage({ item: message.senderKeyDistributionMessage, authorJid: senderAddress });
      }
    }
    if (skmsg) {
      const plain = await this.device.repo.decryptGroupMessage({ group: chat, authorJid: senderAddress, msg: skmsg.content as Uint8Array });
      const groupMessage = proto.Message.decode(unpadRandomMax16(plain));
      message = message ? Object.assign(message, groupMessage) : groupMessage;
      encType = 'skmsg';
    }
    if (!message) throw new Error('nothing to decrypt');
    const inner = message.deviceSentMessage?.message ?? message;
    const received: ContactMessage = {
      id: stanza.attrs.id!,
      chat,
      isGroup,
      sender,
      type: stanza.attrs.type ?? '',
      encType,
      message: inner,
      text: textOf(inner),
      stanza,
    };
    this.inbox.push(received);
    return received;
  }

  /**
   * A retry receipt (`type="retry"`): the gateway could not decrypt a message this contact sent.
   * Answered as a phone does: with the keys the receipt carries (from the second retry on Baileys
   * sends them), a new session from them; without keys, a new session from the server's bundle from
   * the second retry on, else the same session; then the message again, `<enc count=N>`, to that
   * device only.
   */
  async acceptRetry(stanza: BinaryNode, device: Device): Promise<void> {
    const id = stanza.attrs.id!;
    const original = this.sent.get(id);
    if (!original) throw new Error(`retry receipt for ${id}, which ${this.phone} did not send 1:1`);
    const retry = getBinaryNodeChild(stanza, 'retry');
    const count = Number(retry?.attrs.count ?? '1');
    const keys = getBinaryNodeChild(stanza, 'keys');
    const { repo } = this.device;
    let answer: Contact['retries'][number]['answer'] = 'same-session';
    if (keys) {
      const child = (node: BinaryNode | undefined, tag: string): Buffer => {
        const c = getBinaryNodeChild(node, tag);
        return c?.content instanceof Uint8Array ? Buffer.from(c.content) : Buffer.alloc(0);
      };
      const uint = (b: Buffer): number => (b.length > 0 ? b.readUIntBE(0, b.length) : 0);
      const key = getBinaryNodeChild(keys, 'key');
      const skey = getBinaryNodeChild(keys, 'skey');
      const prefixed = (b: Buffer): Buffer => (b.length === 33 ? b : Buffer.concat([Buffer.from([5]), b]));
      await repo.injectE2ESession({
        jid: device.lid,
        session: {
          registrationId: uint(child(stanza, 'registration')),
          identityKey: prefixed(child(keys, 'identity')),
          signedPreKey: { keyId: uint(child(skey, 'id')), publicKey: prefixed(child(skey, 'value')), signature: child(skey, 'signature') },
          ...(key ? { preKey: { keyId: uint(child(key, 'id')), publicKey: prefixed(child(key, 'value')) } } : {}),
        },
      });
      answer = 'new-session-from-receipt';
    } else if (count >= 2) {
      await repo.deleteSession([device.lid]);
      answer = 'new-session-from-server';
    }
    this.retries.push({ id, count, withKeys: !!keys, answer });
    const { type, ciphertext } = await this.encryptFor(device, original.data);
    const encAttrs: Record<string, string> = { v: '2', type, count: String(count), ...(original.mediatype ? { mediatype: original.mediatype } : {}) };
    this.wire.deliver(device, { tag: 'message', attrs: { ...original.attrs, t: String(Math.floor(Date.now() / 1000)) }, content: [{ tag: 'enc', attrs: encAttrs, content: ciphertext }] });
    this.wire.logLine(`${this.phone} answered retry ${count} for ${id} (${answer}, ${type})`);
  }

  acceptReceipt(stanza: BinaryNode): void {
    const list = getBinaryNodeChild(stanza, 'list');
    const more = Array.isArray(list?.content) ? list.content.map((i) => i.attrs.id!).filter(Boolean) : [];
    this.receiptBox.push({ ids: [stanza.attrs.id!, ...more], type: stanza.attrs.type, to: stanza.attrs.to!, participant: stanza.attrs.participant, stanza });
  }

  acceptChatState(stanza: BinaryNode): void {
    const child = Array.isArray(stanza.content) ? stanza.content[0] : undefined;
    this.chatStates.push({ state: child?.tag ?? '', ...(child?.attrs.media ? { media: child.attrs.media } : {}), from: stanza.attrs.from ?? '', to: stanza.attrs.to ?? '' });
  }

  /**
   * Someone left `group`: this contact's next message there starts a new sender key and sends it to
   * the members there are now, as WhatsApp's apps do (the one who left keeps only the old key).
   */
  async rotateSenderKey(group: string): Promise<void> {
    // Baileys' name of a sender key (jidToSignalSenderKeyName): group::user_domain::device; contacts write as their LID.
    await this.device.keys.set({ 'sender-key': { [`${group}::${this.lidUser}_1::0`]: null } });
    for (const memo of [...this.senderKeySent]) if (memo.startsWith(`${group}|`)) this.senderKeySent.delete(memo);
  }

  // ---- helpers ------------------------------------------------------------------------------

  private quoteContext(quoted: ContactMessage): proto.IContextInfo {
    const author = quoted.isGroup ? quoted.sender.lid.replace(/:\d+@/, '@') : quoted.sender.jid.replace(/:\d+@/, '@');
    return { stanzaId: quoted.id, participant: author, quotedMessage: quoted.message };
  }

  /** Pairwise encryption to a gateway device; the session starts from its bundle when there is none. */
  private async encryptFor(device: Device, data: Uint8Array): Promise<{ type: 'pkmsg' | 'msg'; ciphertext: Uint8Array }> {
    const { repo } = this.device;
    const { exists } = await repo.validateSession(device.lid);
    if (!exists) {
      const b = this.wire.bundleOf(device);
      await repo.injectE2ESession({
        jid: device.lid,
        session: {
          registrationId: b.registrationId,
          identityKey: Buffer.concat([Buffer.from([5]), b.identity]),
          signedPreKey: { keyId: b.signedPreKey.id, publicKey: Buffer.concat([Buffer.from([5]), b.signedPreKey.public]), signature: b.signedPreKey.signature },
          ...(b.preKey ? { preKey: { keyId: b.preKey.id, publicKey: Buffer.concat([Buffer.from([5]), b.preKey.public]) } } : {}),
        },
      });
    }
    return repo.encryptMessage({ jid: device.lid, data });
  }
}
