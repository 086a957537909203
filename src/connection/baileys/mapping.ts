import {
  getContentType,
  isHostedLidUser,
  isHostedPnUser,
  isJidBroadcast,
  isJidGroup,
  isJidNewsletter,
  isJidStatusBroadcast,
  isLidUser,
  isPnUser,
  jidDecode,
  jidNormalizedUser,
  normalizeMessageContent,
  proto,
  toNumber,
  type WAMessage,
} from '@whiskeysockets/baileys';
import type { InboundMessage } from '../../schemas/events.js';
import { vcardName, vcardPhone } from '../../domain/vcard.js';
import type { InboundMedia, InboundMediaKind, MessageUpdate } from '../types.js';
import type { InboundExtra } from '../../storage/ports/messages.js';
import { BoundedMap } from '../../domain/bounded-map.js';

/** The part of Baileys' LID mapping store the mapper needs (local lookup, no network). */
export interface LidResolver {
  getPNForLID(lid: string): Promise<string | null>;
}

export type SkipReason =
  | 'no-id'
  | 'no-chat'
  | 'no-message'
  | 'from-me'
  | 'status'
  | 'newsletter'
  | 'broadcast'
  | 'stub'
  | 'protocol'
  | 'no-content';


const E164_DIGITS = /^[1-9][0-9]{6,14}$/;

function phoneOfPnJid(jid: string | null | undefined): string | null {
  if (!jid || !(isPnUser(jid) || isHostedPnUser(jid))) return null;
  const user = jidDecode(jid)?.user;
  return user && E164_DIGITS.test(user) ? `+${user}` : null;
}

/**
 * The sender as +E164. Baileys 7 may address people by LID (`NNN@lid`); the phone JID then comes
 * in the key's `*Alt` field, or from the LID mapping store Baileys fills from history sync and
 * usync. When neither knows it, the caller gets null and reports the LID as is.
 */
export async function resolvePhone(jid: string | null | undefined, alt: string | null | undefined, resolver: LidResolver | undefined): Promise<string | null> {
  const direct = phoneOfPnJid(jid) ?? phoneOfPnJid(alt);
  if (direct) return direct;
  if (jid && resolver && (isLidUser(jid) || isHostedLidUser(jid))) {
    try {
      const pn = await resolver.getPNForLID(jid);
      // Baileys answers with a device-suffixed JID ("1555…:0@s.whatsapp.net").
      if (pn) return phoneOfPnJid(jidNormalizedUser(pn));
    } catch {
      // A failing lookup degrades to reporting the LID; it must not drop the message.
    }
  }
  return null;
}

/** What a media message is, for `media.kind`: voice notes (PTT), stickers and round video notes say so. */
function mediaKind(contentType: string, m: { ptt?: boolean | null } | undefined): InboundMediaKind {
  if (contentType === 'audioMessage') return m?.ptt ? 'voice' : 'audio';
  if (contentType === 'stickerMessage') return 'sticker';
  if (contentType === 'ptvMessage') return 'video-note';
  if (contentType === 'imageMessage') return 'image';
  if (contentType === 'videoMessage') return 'video';
  return 'document';
}

const MEDIA_TYPES: Partial<Record<string, 'image' | 'video' | 'audio' | 'document' | 'sticker'>> = {
  imageMessage: 'image',
  videoMessage: 'video',
  ptvMessage: 'video',
  audioMessage: 'audio',
  documentMessage: 'document',
  stickerMessage: 'sticker',
};

/** What one upserted WAMessage is for the gateway. */
export type Mapped =
  | { ok: true; kind: 'message'; message: InboundMessage; media?: InboundMedia; extra?: InboundExtra }
  | { ok: true; kind: 'update'; update: MessageUpdate }
  | { ok: false; skip: SkipReason };

export interface MapOptions {
  resolver?: LidResolver | undefined;
  /** Fetches and decrypts a media message's bytes (Baileys' downloadMediaMessage). */
  download?: (msg: WAMessage) => Promise<Uint8Array>;
  /** Fallback time when a message carries no timestamp. */
  now: () => number;
  /**
   * The account itself, to report what it sent from its phone or another linked device (`fromMe`,
   * a `message.sent`); `ownSend(id)` is true for sends made through this gateway, which are not
   * reported again. Absent: every `fromMe` message is skipped.
   */
  self?: { jid: string; ownSend(id: string): boolean } | undefined;
}

type Content = NonNullable<ReturnType<typeof normalizeMessageContent>>;

function textOf(content: Content | null | undefined): string | undefined {
  if (!content) return undefined;
  return content.conversation ?? content.extendedTextMessage?.text ?? undefined;
}

/** contextInfo of whatever the content is (quoted message, mentions). */
function contextOf(content: Content, type: string): { stanzaId?: string | null; mentionedJid?: string[] | null } | undefined {
  const inner = (content as Record<string, unknown>)[type];
  if (typeof inner !== 'object' || inner === null) return undefined;
  return (inner as { contextInfo?: { stanzaId?: string | null; mentionedJid?: string[] | null } | null }).contextInfo ?? undefined;
}

function contactCard(displayName: string | null | undefined, card: string | null | undefined): { name: string; phone: string | null; vcard: string } {
  const vcard = card ?? '';
  return { name: displayName ?? vcardName(vcard) ?? '', phone: vcardPhone(vcard), vcard };
}

/**
 * Turns one upserted WAMessage into a received message (with its media to fetch), or an update of
 * an earlier message (a reaction, an edit, a delete from the other side), or says why it is skipped.
 */
export async function mapUpsert(msg: WAMessage, options: MapOptions): Promise<Mapped> {
  const { key } = msg;
  if (!key.id) return { ok: false, skip: 'no-id' };
  const remoteJid = key.remoteJid;
  if (!remoteJid) return { ok: false, skip: 'no-chat' };
  const self = key.fromMe ? options.self : undefined;
  if (key.fromMe && (!self || self.ownSend(key.id) || msg.category === 'peer')) return { ok: false, skip: 'from-me' };
  if (isJidStatusBroadcast(remoteJid)) return { ok: false, skip: 'status' };
  if (isJidNewsletter(remoteJid)) return { ok: false, skip: 'newsletter' };
  if (isJidBroadcast(remoteJid)) return { ok: false, skip: 'broadcast' };
  if (msg.messageStubType) return { ok: false, skip: 'stub' };
  if (!msg.message) return { ok: false, skip: 'no-message' };

  const content = normalizeMessageContent(msg.message);
  const contentType = getContentType(content);
  if (!content || !contentType) return { ok: false, skip: 'no-content' };

  const isGroup = isJidGroup(remoteJid) === true;
  let phone: string | null;
  let sender: string;
  let chatId: string;
  if (self) {
    // The account wrote it: the sender is the account, the chat the one it wrote to (its phone
    // chat when the mapping knows the number of a LID chat).
    const own = jidNormalizedUser(self.jid);
    sender = own;
    phone = phoneOfPnJid(own);
    const chatPhone = isGroup ? null : await resolvePhone(remoteJid, undefined, options.resolver);
    chatId = chatPhone ? `${chatPhone.slice(1)}@s.whatsapp.net` : jidNormalizedUser(remoteJid);
  } else {
    const senderJid = isGroup ? key.participant : remoteJid;
    const senderAlt = isGroup ? key.participantAlt : key.remoteJidAlt;
    phone = await resolvePhone(senderJid, senderAlt, options.resolver);
    sender = jidNormalizedUser(senderJid ?? remoteJid);
    chatId = isGroup || !phone ? jidNormalizedUser(remoteJid) : `${phone.slice(1)}@s.whatsapp.net`;
  }
  const seconds = toNumber(msg.messageTimestamp);
  const timestamp = new Date(seconds > 0 ? seconds * 1000 : options.now()).toISOString();

  // What the account itself did to messages (reactions, edits, deletes) is not a message.
  if (self && (contentType === 'reactionMessage' || contentType === 'protocolMessage')) return { ok: false, skip: 'from-me' };
  if (contentType === 'reactionMessage') {
    const r = content.reactionMessage;
    if (!r?.key?.id) return { ok: false, skip: 'no-content' };
    return { ok: true, kind: 'update', update: { kind: 'reaction', messageId: r.key.id, chatId, sender, from: phone, emoji: r.text ?? '', timestamp } };
  }
  if (contentType === 'protocolMessage') {
    const p = content.protocolMessage;
    const target = p?.key?.id;
    if (!p || !target) return { ok: false, skip: 'protocol' };
    if (p.type === proto.Message.ProtocolMessage.Type.REVOKE) {
      return { ok: true, kind: 'update', update: { kind: 'delete', messageId: target, chatId, sender, from: phone, timestamp } };
    }
    if (p.type === proto.Message.ProtocolMessage.Type.MESSAGE_EDIT) {
      const edited = normalizeMessageContent(p.editedMessage);
      const text = textOf(edited) ?? edited?.imageMessage?.caption ?? edited?.videoMessage?.caption ?? edited?.documentMessage?.caption ?? '';
      return { ok: true, kind: 'update', update: { kind: 'edit', messageId: target, chatId, sender, from: phone, text, timestamp } };
    }
    return { ok: false, skip: 'protocol' };
  }
  // Votes are decrypted on their own (polls.ts).
  if (contentType === 'pollUpdateMessage' || contentType === 'senderKeyDistributionMessage') return { ok: false, skip: 'protocol' };

  const out: InboundMessage = { messageId: key.id, chatId, isGroup, sender, from: phone, type: 'other', timestamp };
  if (self) out.fromMe = true;
  else if (msg.pushName) out.fromName = msg.pushName;
  const context = contextOf(content, contentType);
  if (context?.stanzaId) out.quoted = { messageId: context.stanzaId };
  if (context?.mentionedJid && context.mentionedJid.length > 0) out.mentions = context.mentionedJid;

  let media: InboundMedia | undefined;
  const text = textOf(content);
  if (text !== undefined) {
    out.type = 'text';
    out.text = text;
  } else if (MEDIA_TYPES[contentType]) {
    out.type = MEDIA_TYPES[contentType]!;
    const m = (content as Record<string, { caption?: string | null; mimetype?: string | null; fileName?: string | null; ptt?: boolean | null; fileLength?: Parameters<typeof toNumber>[0] } | undefined>)[contentType];
    if (m?.caption) out.caption = m.caption;
    if (options.download) {
      const download = options.download;
      media = {
        mimetype: m?.mimetype ?? 'application/octet-stream',
        kind: mediaKind(contentType, m),
        ...(m?.fileName ? { fileName: m.fileName } : {}),
        ...(m?.fileLength != null ? { declaredSize: toNumber(m.fileLength) } : {}),
        download: () => download(msg),
      };
    }
  } else if (contentType === 'locationMessage' || contentType === 'liveLocationMessage') {
    const l = content.locationMessage ?? content.liveLocationMessage;
    out.type = 'location';
    out.location = {
      latitude: Number(l?.degreesLatitude ?? 0),
      longitude: Number(l?.degreesLongitude ?? 0),
      ...(content.locationMessage?.name ? { name: content.locationMessage.name } : {}),
      ...(content.locationMessage?.address ? { address: content.locationMessage.address } : {}),
    };
  } else if (contentType === 'contactMessage') {
    out.type = 'contact';
    out.contacts = [contactCard(content.contactMessage?.displayName, content.contactMessage?.vcard)];
  } else if (contentType === 'contactsArrayMessage') {
    out.type = 'contact';
    out.contacts = (content.contactsArrayMessage?.contacts ?? []).map((c) => contactCard(c.displayName, c.vcard));
  } else if (contentType === 'pollCreationMessage' || contentType === 'pollCreationMessageV2' || contentType === 'pollCreationMessageV3') {
    const p = content.pollCreationMessage ?? content.pollCreationMessageV2 ?? content.pollCreationMessageV3;
    out.type = 'poll';
    out.poll = { question: p?.name ?? '', options: (p?.options ?? []).map((o) => o.optionName ?? ''), multiple: (p?.selectableOptionsCount ?? 0) !== 1 };
    // Votes on it come encrypted with its secret: kept with it (never shown).
    const secret = msg.message.messageContextInfo?.messageSecret ?? content.messageContextInfo?.messageSecret;
    if (secret && secret.length > 0) return { ok: true, kind: 'message', message: out, extra: { pollSecret: Buffer.from(secret).toString('base64') } };
  }
  return { ok: true, kind: 'message', message: out, ...(media ? { media } : {}) };
}

/** Baileys' receipt statuses (proto.WebMessageInfo.Status) as the gateway's message statuses. */
export function statusOf(code: number | null | undefined): 'sent' | 'delivered' | 'read' | 'played' | 'failed' | null {
  switch (code) {
    case 0:
      return 'failed';
    case 2:
      return 'sent';
    case 3:
      return 'delivered';
    case 4:
      return 'read';
    case 5:
      return 'played';
    default:
      return null;
  }
}

type StatusUpdate = Extract<MessageUpdate, { kind: 'status' }>;

/**
 * A status with the ones it implies before it: read means delivered, played means read. Baileys'
 * event buffer merges the updates of one message while it buffers (a login's offline receipts,
 * for one), so `delivered` then `read` can reach us as `read` alone; and WhatsApp itself may send a
 * read receipt without a delivery one. Statuses never go backwards downstream, so an implied one
 * already reported changes nothing; one never reported becomes its event, with the time of the
 * receipt that implied it.
 */
export function withImplied(u: StatusUpdate): StatusUpdate[] {
  const implied: StatusUpdate['status'][] = u.status === 'read' ? ['delivered'] : u.status === 'played' ? ['delivered', 'read'] : [];
  return [...implied.map((status) => ({ ...u, status })), u];
}

/**
 * Receipts Baileys folded into the upsert of one of our own messages. While its event buffer is on
 * (after a login, until history sync or the next stanza it processes), a receipt for a message
 * whose own upsert is still buffered is merged into that upsert (`status`, or `userReceipt` in
 * groups) instead of being emitted as messages.update / message-receipt.update; listening to those
 * alone loses it. Statuses never go backwards downstream, so reporting one twice is harmless.
 */
export function foldedStatuses(msg: WAMessage, now: () => number): MessageUpdate[] {
  const { key } = msg;
  if (!key.fromMe || !key.id || !key.remoteJid) return [];
  const chatId = jidNormalizedUser(key.remoteJid);
  const at = (t: unknown): string => {
    const seconds = toNumber(t as number | null | undefined);
    return new Date(seconds > 0 ? seconds * 1000 : now()).toISOString();
  };
  const out: StatusUpdate[] = [];
  const status = statusOf(msg.status);
  const code = status === 'failed' ? msg.messageStubParameters?.[0] : undefined;
  const error = code ? { error: `WhatsApp refused the message (error ${code})` } : {};
  if (status !== null) out.push(...withImplied({ kind: 'status', messageId: key.id, chatId, status, timestamp: at(msg.messageTimestamp), ...error }));
  for (const r of msg.userReceipt ?? []) {
    if (r.receiptTimestamp) out.push({ kind: 'status', messageId: key.id, chatId, status: 'delivered', timestamp: at(r.receiptTimestamp) });
    if (r.readTimestamp) out.push(...withImplied({ kind: 'status', messageId: key.id, chatId, status: 'read', timestamp: at(r.readTimestamp) }));
    if (r.playedTimestamp) out.push(...withImplied({ kind: 'status', messageId: key.id, chatId, status: 'played', timestamp: at(r.playedTimestamp) }));
  }
  return out;
}

/** Remembers message ids already handed on: the offline backlog (`append`) repeats live ones. */
export class SeenMessages {
  private readonly ids: BoundedMap<string, true>;

  constructor(capacity = 5000) {
    this.ids = new BoundedMap(capacity);
  }

  /** True the first time an id is seen. */
  claim(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.set(id, true);
    return true;
  }

  /** Lets a later copy through, when handing this one on failed. */
  release(id: string): void {
    this.ids.delete(id);
  }
}
