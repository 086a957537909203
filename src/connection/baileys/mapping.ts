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
  toNumber,
  type WAMessage,
} from '@whiskeysockets/baileys';
import type { InboundMessage, MessageType } from '../../domain/types.js';
import { BoundedMap } from './lru.js';

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

export type MapResult = { ok: true; message: InboundMessage } | { ok: false; skip: SkipReason };

export interface MapOptions {
  resolver?: LidResolver | undefined;
  /** Fallback time when a message carries no timestamp. */
  now: () => number;
}

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
async function resolvePhone(jid: string | null | undefined, alt: string | null | undefined, resolver: LidResolver | undefined): Promise<string | null> {
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

const MEDIA_TYPES: Partial<Record<string, MessageType>> = {
  imageMessage: 'image',
  videoMessage: 'video',
  ptvMessage: 'video',
  audioMessage: 'audio',
  documentMessage: 'document',
};

/** Turns one upserted WAMessage into the gateway's InboundMessage, or says why it is skipped. */
export async function mapInbound(msg: WAMessage, options: MapOptions): Promise<MapResult> {
  const { key } = msg;
  if (!key.id) return { ok: false, skip: 'no-id' };
  const remoteJid = key.remoteJid;
  if (!remoteJid) return { ok: false, skip: 'no-chat' };
  if (key.fromMe) return { ok: false, skip: 'from-me' };
  if (isJidStatusBroadcast(remoteJid)) return { ok: false, skip: 'status' };
  if (isJidNewsletter(remoteJid)) return { ok: false, skip: 'newsletter' };
  if (isJidBroadcast(remoteJid)) return { ok: false, skip: 'broadcast' };
  if (msg.messageStubType) return { ok: false, skip: 'stub' };
  if (!msg.message) return { ok: false, skip: 'no-message' };

  const content = normalizeMessageContent(msg.message);
  const contentType = getContentType(content);
  if (!content || !contentType) return { ok: false, skip: 'no-content' };
  if (contentType === 'protocolMessage') return { ok: false, skip: 'protocol' };

  const isGroup = isJidGroup(remoteJid) === true;
  const senderJid = isGroup ? key.participant : remoteJid;
  const senderAlt = isGroup ? key.participantAlt : key.remoteJidAlt;
  const phone = await resolvePhone(senderJid, senderAlt, options.resolver);
  const sender = jidNormalizedUser(senderJid ?? remoteJid);
  const chatId = isGroup || !phone ? jidNormalizedUser(remoteJid) : `${phone.slice(1)}@s.whatsapp.net`;

  const seconds = toNumber(msg.messageTimestamp);
  const timestamp = new Date(seconds > 0 ? seconds * 1000 : options.now()).toISOString();

  const out: InboundMessage = { messageId: key.id, chatId, isGroup, sender, from: phone, type: 'other', timestamp };
  if (msg.pushName) out.fromName = msg.pushName;

  if (contentType === 'conversation') {
    out.type = 'text';
    out.text = content.conversation ?? '';
  } else if (contentType === 'extendedTextMessage') {
    out.type = 'text';
    out.text = content.extendedTextMessage?.text ?? '';
  } else {
    const media = MEDIA_TYPES[contentType];
    if (media) {
      out.type = media;
      const caption =
        content.imageMessage?.caption ??
        content.videoMessage?.caption ??
        content.ptvMessage?.caption ??
        content.documentMessage?.caption;
      if (caption) out.caption = caption;
    }
  }
  return { ok: true, message: out };
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
