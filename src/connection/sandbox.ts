import { randomBytes } from 'node:crypto';
import { GatewayError } from '../domain/errors.js';
import { newMessageId } from '../domain/ids.js';
import type { ConnectionStatus, MessageType } from '../domain/types.js';
import type { InboundMessage } from '../schemas/events.js';
import type { AuthStateRepository } from '../storage/ports/auth-state.js';
import { vcard } from '../domain/vcard.js';
import type { Connection, ConnectionHooks, GroupInfo, GroupSummary, InboundMediaKind, LogoutOutcome, MessageRef, NumberCheck, Outgoing } from './types.js';
import type { CreatedGroup, GroupSettings, ParticipantResult } from './account-types.js';
import type { GroupAction, PresenceState } from '../schemas/account-events.js';
import type { BlockedContact, ChatChange, ContactInfo, LabelInfo, ProfileInfo } from './contacts-types.js';
import { SandboxAccount } from './sandbox-account.js';
import { SandboxContacts, sandboxPhone, type SandboxContactsAction } from './sandbox-contacts.js';

export interface SentRecord {
  messageId: string;
  /** The chat it went to. */
  to: string;
  /** The recipient's phone when `to` is a phone chat, else null. */
  phone: string | null;
  type: MessageType;
  message?: string;
  caption?: string;
  replyTo?: string;
  location?: { latitude: number; longitude: number; name?: string; address?: string };
  contacts?: Array<{ name: string; phone: string; vcard: string }>;
  poll?: { question: string; options: string[]; multiple: boolean };
  /** How a media message shows (voice note, sticker, round video). */
  as?: 'voice' | 'sticker' | 'video-note';
  /** Who sees a status post (`to` is `status@broadcast`); absent: the account's contacts. */
  audience?: string[];
  sentAt: string;
}

/** Something the instance did besides sending a message (reactions, edits, read marks, ...). */
export interface SandboxAction {
  action: 'react' | 'edit' | 'delete' | 'read' | 'presence' | 'subscribe' | 'reject-call' | SandboxContactsAction['action'];
  chatId: string;
  messageId?: string;
  callId?: string;
  labelId?: string;
  emoji?: string;
  text?: string;
  state?: string;
  at: string;
}

/** A simulated received message (see POST /sandbox/inbound). */
export interface SandboxInbound {
  /** The sender's phone; may be absent when `lid` is given. */
  from?: string;
  /** The sender writes from this LID (digits). */
  lid?: string;
  /** A group the message arrives in. */
  chatId?: string;
  message?: string;
  name?: string;
  replyTo?: string;
  media?: { type: 'image' | 'video' | 'audio' | 'document'; mimetype: string; fileName?: string; bytes: Uint8Array; kind?: InboundMediaKind };
}

export interface SandboxOptions {
  /** Where the simulated "credentials" (paired or not) live, so a restart stays connected. */
  auth: AuthStateRepository;
  /** Delay before the first QR; DESIGN.md asks for under a second. */
  qrDelayMs?: number;
  /** Messages kept for `GET /sandbox/sent`. */
  sentLimit?: number;
  now?: () => number;
  /** The instance's `alwaysOnline` setting, read at every connect (as Baileys' markOnlineOnConnect is). */
  alwaysOnline?: () => boolean;
}

/**
 * The in-process connection: same interface and state machine as the Baileys one, driven by the
 * sandbox routes instead of a phone.
 */
export class SandboxConnection implements Connection {
  private state: ConnectionStatus = 'disconnected';
  private currentQr: string | null = null;
  private lastReason: string | null = null;
  private readonly sentLog: SentRecord[] = [];
  private readonly actionLog: SandboxAction[] = [];
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  /** The other side of the account besides messages: groups, calls, presence, poll votes. */
  readonly account: SandboxAccount;
  /** Contacts, block list, profile, chat settings and labels of the simulated account. */
  readonly contacts: SandboxContacts;

  constructor(
    readonly instanceId: string,
    private readonly hooks: ConnectionHooks,
    private readonly options: SandboxOptions,
  ) {
    this.account = new SandboxAccount(hooks, () => this.now());
    this.contacts = new SandboxContacts({
      instanceId,
      requireConnected: () => this.requireConnected(),
      record: (a) => this.act({ ...a, chatId: a.chatId ?? '' }),
      ...(hooks.onLabel ? { onLabel: (u) => hooks.onLabel!(u) } : {}),
    });
  }

  get status(): ConnectionStatus {
    return this.state;
  }
  get qr(): string | null {
    return this.state === 'qr_code_generated' ? this.currentQr : null;
  }
  get reason(): string | null {
    return this.lastReason;
  }

  private setStatus(to: ConnectionStatus, reason?: string): void {
    const from = this.state;
    if (from === to) return;
    this.state = to;
    this.lastReason = reason ?? null;
    try {
      this.hooks.onStatus(reason === undefined ? { from, to } : { from, to, reason });
    } catch {
      // A hook failure must not break the state machine.
    }
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.setStatus('initializing', 'starting');
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.afterStart();
    }, this.options.qrDelayMs ?? 50);
    this.timer.unref();
  }

  private async afterStart(): Promise<void> {
    if (!this.running) return;
    const paired = await this.isPaired();
    // A scan (or a stop) may have come while the file was read: a QR now would undo its `connected`.
    if (!this.running || this.state === 'connected') return;
    if (paired) {
      this.connected('restored session');
    } else {
      this.showQr();
    }
  }

  private showQr(): void {
    this.currentQr = `sandbox:${this.instanceId}:${randomBytes(12).toString('base64url')}`;
    this.setStatus('qr_code_generated', 'waiting for scan');
    try {
      this.hooks.onQr(this.currentQr);
    } catch {
      // see setStatus
    }
  }

  private isPaired(): Promise<boolean> {
    return this.options.auth.isPaired(this.instanceId).catch(() => false);
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.setStatus('disconnected', 'stopped');
  }

  async logout(): Promise<LogoutOutcome> {
    const paired = await this.isPaired();
    await this.stop();
    await this.options.auth.remove(this.instanceId);
    return paired ? 'logged-out' : 'not-paired';
  }

  /** Pairing by code: the simulated phone accepts any code; `scan` completes the pairing. */
  async requestPairingCode(): Promise<string> {
    if (this.state === 'connected') throw new GatewayError('ALREADY_CONNECTED', 'the instance is connected; log it out first to pair another phone');
    this.start();
    return randomBytes(6).toString('base64url').replace(/[^A-Za-z0-9]/g, 'X').slice(0, 8).toUpperCase();
  }

  /** The simulated phone scans the QR (or reconnects after `disconnect`). */
  async scan(): Promise<void> {
    if (this.state === 'connected') return;
    await this.options.auth.write(this.instanceId, { creds: JSON.stringify({ sandbox: true, pairedAt: new Date(this.now()).toISOString() }), tables: [], paired: true });
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.running = true;
    this.connected('scanned');
  }

  /** Connected: like Baileys, shows the account online at once when `alwaysOnline` says so. */
  private connected(reason: string): void {
    this.setStatus('connected', reason);
    if (this.state === 'connected' && this.options.alwaysOnline?.()) this.act({ action: 'presence', chatId: '', state: 'available' });
  }

  /** Simulates a dropped connection; credentials stay, `scan` reconnects. */
  disconnect(): void {
    this.setStatus('disconnected', 'disconnected by sandbox');
  }

  /** Simulates a received message; resolves once it is durably stored. */
  /**
   * Simulates a received message; resolves once it is durably stored. `lid`: the sender writes
   * from this LID (its phone is known only when `from` is given too); `chatId`: a group it was
   * written in; `media`: a file it carries.
   */
  async inbound(input: SandboxInbound): Promise<InboundMessage> {
    this.requireConnected();
    const senderPn = input.from !== undefined ? `${input.from.slice(1)}@s.whatsapp.net` : null;
    const sender = input.lid !== undefined ? `${input.lid}@lid` : senderPn!;
    if (input.lid !== undefined && input.from !== undefined) this.contacts.learnLid(sender, input.from);
    const isGroup = input.chatId !== undefined;
    if (isGroup) this.account.groups.noteSender(input.chatId!, sender);
    const chatId = isGroup ? input.chatId! : (senderPn ?? sender);
    const type = input.media ? input.media.type : 'text';
    const message: InboundMessage = {
      messageId: newMessageId('SBX'),
      chatId,
      isGroup,
      sender,
      from: input.from ?? null,
      ...(input.name ? { fromName: input.name } : {}),
      type,
      ...(input.media ? (input.message !== undefined ? { caption: input.message } : {}) : { text: input.message ?? '' }),
      ...(input.replyTo !== undefined ? { quoted: { messageId: input.replyTo } } : {}),
      timestamp: new Date(this.now()).toISOString(),
    };
    await this.hooks.onMessage(message, this.inboundMedia(input.media));
    return message;
  }

  private inboundMedia(media: SandboxInbound['media']): Parameters<ConnectionHooks['onMessage']>[1] {
    if (!media) return undefined;
    return { mimetype: media.mimetype, ...(media.fileName !== undefined ? { fileName: media.fileName } : {}), kind: media.kind ?? media.type, declaredSize: media.bytes.length, download: async () => media.bytes };
  }

  /**
   * Simulates a message the account sent from its phone (or another linked device) to `to`: a
   * `message.sent` event, and history; resolves once it is durably stored.
   */
  async outbound(input: { to: string; message?: string; media?: SandboxInbound['media'] }): Promise<InboundMessage> {
    this.requireConnected();
    const phone = sandboxPhone();
    const message: InboundMessage = {
      messageId: newMessageId('SBX'),
      chatId: input.to,
      isGroup: input.to.endsWith('@g.us'),
      sender: `${phone.slice(1)}@s.whatsapp.net`,
      from: phone,
      type: input.media ? input.media.type : 'text',
      ...(input.media ? (input.message !== undefined ? { caption: input.message } : {}) : { text: input.message ?? '' }),
      timestamp: new Date(this.now()).toISOString(),
      fromMe: true,
    };
    await this.hooks.onMessage(message, this.inboundMedia(input.media));
    return message;
  }

  /** Simulates the recipient's receipt for a message this instance sent. */
  async receipt(messageId: string, status: 'delivered' | 'read' | 'played'): Promise<void> {
    this.requireConnected();
    const sent = this.sentLog.find((m) => m.messageId === messageId);
    if (!sent) throw new GatewayError('NOT_FOUND', `this sandbox has not sent a message ${JSON.stringify(messageId.slice(0, 60))}`);
    await this.hooks.onUpdate({ kind: 'status', messageId, chatId: sent.to, status, timestamp: new Date(this.now()).toISOString() });
  }

  /** Simulates `from` reacting to a message of this chat ("" removes the reaction). */
  async playReaction(input: { messageId: string; emoji: string; from: string }): Promise<void> {
    this.requireConnected();
    const sent = this.sentLog.find((m) => m.messageId === input.messageId);
    const sender = `${input.from.slice(1)}@s.whatsapp.net`;
    await this.hooks.onUpdate({
      kind: 'reaction',
      messageId: input.messageId,
      chatId: sent?.to ?? sender,
      sender,
      from: input.from,
      emoji: input.emoji,
      timestamp: new Date(this.now()).toISOString(),
    });
  }

  // ---- what the instance does besides sending (the Connection interface) ----------------

  private act(a: Omit<SandboxAction, 'at'>): void {
    this.requireConnected();
    this.actionLog.push({ ...a, at: new Date(this.now()).toISOString() });
    if (this.actionLog.length > 2000) this.actionLog.splice(0, 1000);
  }

  async react(target: MessageRef, emoji: string): Promise<void> {
    this.act({ action: 'react', chatId: target.chatId, messageId: target.messageId, emoji });
  }

  async edit(target: MessageRef, text: string): Promise<void> {
    this.act({ action: 'edit', chatId: target.chatId, messageId: target.messageId, text });
  }

  async remove(target: MessageRef): Promise<void> {
    this.act({ action: 'delete', chatId: target.chatId, messageId: target.messageId });
  }

  async markRead(targets: MessageRef[]): Promise<void> {
    for (const t of targets) this.act({ action: 'read', chatId: t.chatId, messageId: t.messageId });
  }

  async presence(chatId: string, state: PresenceState): Promise<void> {
    this.act({ action: 'presence', chatId, state });
  }

  async subscribePresence(chatId: string): Promise<void> {
    this.act({ action: 'subscribe', chatId });
  }

  async rejectCall(callId: string): Promise<boolean> {
    this.requireConnected();
    const call = this.account.rejectCall(callId);
    if (!call) return false;
    this.act({ action: 'reject-call', chatId: call.chatId, callId });
    return true;
  }

  // Groups: see sandbox-groups.ts.
  async createGroup(subject: string, participants: string[]): Promise<CreatedGroup> {
    this.requireConnected();
    return this.account.groups.create(subject, participants);
  }

  async updateGroup(chatId: string, settings: GroupSettings): Promise<void> {
    this.requireConnected();
    await this.account.groups.update(chatId, settings);
  }

  async groupParticipants(chatId: string, action: GroupAction, participants: string[]): Promise<ParticipantResult[]> {
    this.requireConnected();
    return this.account.groups.participants(chatId, action, participants);
  }

  async groupInvite(chatId: string, revoke: boolean): Promise<string> {
    this.requireConnected();
    return this.account.groups.invite(chatId, revoke);
  }

  async joinGroup(code: string): Promise<string> {
    this.requireConnected();
    return this.account.groups.join(code);
  }

  async leaveGroup(chatId: string): Promise<void> {
    this.requireConnected();
    await this.account.groups.leave(chatId);
  }

  async groupPicture(chatId: string, image: Uint8Array | null): Promise<void> {
    this.requireConnected();
    await this.account.groups.picture(chatId, image !== null);
  }

  /** A poll this sandbox sent, for POST /sandbox/vote. */
  sentPoll(messageId: string): { messageId: string; to: string; options: string[]; multiple: boolean } | undefined {
    const m = this.sentLog.find((x) => x.messageId === messageId && x.poll);
    return m?.poll ? { messageId, to: m.to, options: m.poll.options, multiple: m.poll.multiple } : undefined;
  }

  /** Every E.164 number exists on the simulated WhatsApp. */
  async checkNumbers(phones: string[]): Promise<NumberCheck[]> {
    this.requireConnected();
    return phones.map((phone) => ({ phone, exists: true, chatId: `${phone.slice(1)}@s.whatsapp.net` }));
  }

  /** The groups inbound messages named, the instance made or joined, or the sandbox played. */
  async groups(): Promise<GroupSummary[]> {
    this.requireConnected();
    return this.account.groups.list();
  }

  async group(chatId: string): Promise<GroupInfo | null> {
    this.requireConnected();
    return this.account.groups.info(chatId);
  }

  // ---- contacts, profile, chats, labels (see sandbox-contacts.ts) --------------------------------------------------

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

  /** What the instance did besides sending, oldest first (bounded). */
  actions(): readonly SandboxAction[] {
    return this.actionLog;
  }

  private requireConnected(): void {
    if (this.state !== 'connected') throw new GatewayError('CONNECTION_NOT_READY', `instance is ${this.state}, not connected`);
  }

  async send(message: Outgoing): Promise<{ messageId: string }> {
    if (this.state !== 'connected') throw new GatewayError('CONNECTION_NOT_READY', `instance is ${this.state}, not connected`);
    const record: SentRecord = {
      messageId: message.id,
      to: message.to,
      phone: message.to.endsWith('@s.whatsapp.net') ? `+${message.to.slice(0, message.to.indexOf('@'))}` : null,
      type: message.kind === 'media' ? (message.as === 'sticker' ? 'sticker' : message.mediaType) : message.kind === 'status' ? (message.media?.mediaType ?? 'text') : message.kind,
      sentAt: this.isoNow(),
    };
    if (message.replyTo !== undefined) record.replyTo = message.replyTo;
    if (message.kind === 'text') record.message = message.text;
    else if (message.kind === 'media') {
      if (message.caption !== undefined) record.caption = message.caption;
      if (message.as !== undefined) record.as = message.as;
    } else if (message.kind === 'status') {
      if (message.text !== undefined) record.message = message.text;
      if (message.media?.caption !== undefined) record.caption = message.media.caption;
      if (message.audience !== undefined) record.audience = message.audience;
    }
    else if (message.kind === 'location') record.location = { latitude: message.latitude, longitude: message.longitude, ...(message.name !== undefined ? { name: message.name } : {}), ...(message.address !== undefined ? { address: message.address } : {}) };
    else if (message.kind === 'contact') record.contacts = message.contacts.map((c) => ({ ...c, vcard: vcard(c.name, c.phone) }));
    else if (message.kind === 'poll') record.poll = { question: message.question, options: message.options, multiple: message.multiple };
    this.sentLog.push(record);
    // Trimmed in chunks: a splice per send would shift the whole log every time.
    const limit = this.options.sentLimit ?? 1000;
    if (this.sentLog.length > limit * 2) this.sentLog.splice(0, this.sentLog.length - limit);
    return { messageId: record.messageId };
  }

  /** The last `sentLimit` messages, oldest first. */
  sent(): readonly SentRecord[] {
    const limit = this.options.sentLimit ?? 1000;
    return this.sentLog.length > limit ? this.sentLog.slice(-limit) : this.sentLog;
  }

  private now(): number {
    return this.options.now ? this.options.now() : Date.now();
  }

  private isoMs = NaN;
  private isoText = '';

  /** The clock as an ISO string, formatted once per millisecond (every send stamps one). */
  private isoNow(): string {
    const ms = this.now();
    if (ms !== this.isoMs) {
      this.isoMs = ms;
      this.isoText = new Date(ms).toISOString();
    }
    return this.isoText;
  }
}
