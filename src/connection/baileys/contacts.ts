import { isLidUser, isPnUser, jidDecode, jidNormalizedUser, type AuthenticationCreds, type ChatModification } from '@whiskeysockets/baileys';
import { GatewayError, errorMessage } from '../../domain/errors.js';
import type { AccountActions, BlockedContact, ChatChange, ContactInfo, LabelInfo, ProfileInfo } from '../contacts-types.js';
import type { AccountBook } from './account-book.js';
import { closeCode } from './outgoing.js';
import type { SocketLike } from './options.js';

/** `+digits` of a phone JID (device suffix ignored), or undefined. */
export function phoneOf(jid: string | null | undefined): string | undefined {
  if (!jid || !isPnUser(jid)) return undefined;
  const user = jidDecode(jid)?.user;
  return user && /^[1-9][0-9]{6,14}$/.test(user) ? `+${user}` : undefined;
}

/** WhatsApp's platform names of the Business app (pair-success `<platform name>`, kept in creds). */
const BUSINESS_PLATFORMS = new Set(['smba', 'smbi']);

export interface BaileysContactsDeps {
  /** The live socket; throws CONNECTION_NOT_READY otherwise. */
  live(): SocketLike;
  creds(): AuthenticationCreds | null;
  book: AccountBook;
}

/**
 * Baileys errors as gateway errors: what WhatsApp refused (a Boom with a 4xx) is the caller's
 * input; an app-state change before the phone shared its app-state key cannot be made yet.
 */
function translate(err: unknown, what: string): unknown {
  if (err instanceof GatewayError) return err;
  const message = errorMessage(err);
  if (/app state key not present/i.test(message)) return new GatewayError('CONNECTION_NOT_READY', `${what}: the phone has not shared its app state with this device yet; try again once the first sync ended`, { cause: err });
  const code = closeCode(err);
  if (code === 428) return new GatewayError('CONNECTION_NOT_READY', `${what}: the WhatsApp connection closed`, { cause: err });
  if (code === 404) return new GatewayError('NOT_FOUND', `${what}: WhatsApp knows no such item (${message})`, { cause: err });
  if (code !== undefined && code >= 400 && code < 500) return new GatewayError('INVALID_FIELD', `${what}: WhatsApp refused it (${message})`, { cause: err });
  return err;
}

async function attempt<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw translate(err, what);
  }
}

/** Best effort: privacy settings may hide an about text or a picture; WhatsApp then answers an error. */
async function optional<T>(run: () => Promise<T | undefined>): Promise<T | undefined> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    return undefined;
  }
}

/** The account actions (contacts, block list, profile, chats, labels) over a Baileys socket. */
export class BaileysContacts implements AccountActions {
  constructor(private readonly deps: BaileysContactsDeps) {}

  private me(): { jid: string; name: string } {
    const me = this.deps.creds()?.me;
    if (!me) throw new GatewayError('CONNECTION_NOT_READY', 'the instance is not paired');
    return { jid: jidNormalizedUser(me.id), name: me.name ?? '' };
  }

  get business(): boolean {
    const platform = this.deps.creds()?.platform;
    return platform !== undefined && BUSINESS_PLATFORMS.has(platform);
  }

  /** The phone and LID of a chat: from Baileys' mapping; a phone without one asks WhatsApp (usync). */
  private async addresses(sock: SocketLike, chatId: string): Promise<{ pn: string | null; lid: string | null }> {
    const mapping = sock.signalRepository.lidMapping;
    if (isLidUser(chatId)) {
      // WhatsApp answers no LID -> phone query (a LID exists to hide the number): the local mapping only.
      const pn = await mapping.getPNForLID(chatId).catch(() => null);
      return { pn: pn ? jidNormalizedUser(pn) : null, lid: chatId };
    }
    const lid = await mapping.getLIDForPN(chatId).catch(() => null);
    return { pn: chatId, lid: lid ? jidNormalizedUser(lid) : null };
  }

  async contactInfo(chatId: string): Promise<ContactInfo> {
    const sock = this.deps.live();
    const { pn, lid } = await attempt('looking up the contact', () => this.addresses(sock, chatId));
    let exists: boolean;
    if (pn) {
      const found = await attempt('looking up the contact', async () => (await sock.onWhatsApp(pn)) ?? []);
      exists = found.some((f) => f.exists);
    } else {
      // Only an existing account has a LID.
      exists = true;
    }
    const target = pn ?? lid ?? chatId;
    const about = exists ? await optional(async () => this.aboutOf(sock, target)) : undefined;
    const pictureUrl = exists ? await optional(() => sock.profilePictureUrl(target, 'image')) : undefined;
    const name = this.deps.book.nameOf(pn) ?? this.deps.book.nameOf(lid);
    const phone = phoneOf(pn);
    return {
      chatId: pn ?? lid ?? chatId,
      ...(phone ? { phone } : {}),
      ...(lid ? { lid } : {}),
      ...(name ? { name } : {}),
      ...(about ? { about } : {}),
      ...(pictureUrl ? { pictureUrl } : {}),
      exists,
    };
  }

  private async aboutOf(sock: SocketLike, jid: string): Promise<string | undefined> {
    const list = (await sock.fetchStatus(jid)) ?? [];
    const entry = list.find((e) => jidNormalizedUser(e.id) === jidNormalizedUser(jid)) ?? list[0];
    const status = (entry as { status?: { status?: string | null } } | undefined)?.status?.status;
    return typeof status === 'string' && status !== '' ? status : undefined;
  }

  async setBlocked(chatId: string, blocked: boolean): Promise<void> {
    const sock = this.deps.live();
    await attempt(blocked ? 'blocking' : 'unblocking', () => sock.updateBlockStatus(chatId, blocked ? 'block' : 'unblock'));
  }

  async blocklist(): Promise<BlockedContact[]> {
    const sock = this.deps.live();
    const jids = await attempt('reading the block list', async () => (await sock.fetchBlocklist()).filter((j): j is string => typeof j === 'string'));
    const out: BlockedContact[] = [];
    for (const jid of jids) {
      const normal = jidNormalizedUser(jid);
      const { pn, lid } = isLidUser(normal) ? await this.addresses(sock, normal) : { pn: normal, lid: null };
      const phone = phoneOf(pn);
      out.push({ chatId: pn ?? lid ?? normal, ...(phone ? { phone } : {}) });
    }
    return out;
  }

  async profile(): Promise<ProfileInfo> {
    const sock = this.deps.live();
    const me = this.me();
    const about = await optional(() => this.aboutOf(sock, me.jid));
    const pictureUrl = await optional(() => sock.profilePictureUrl(me.jid, 'image'));
    return { jid: me.jid, phone: phoneOf(me.jid) ?? '', name: me.name, about: about ?? '', ...(pictureUrl ? { pictureUrl } : {}), business: this.business };
  }

  async updateProfile(change: { name?: string; about?: string }): Promise<void> {
    const sock = this.deps.live();
    if (change.about !== undefined) await attempt('changing the about text', () => sock.updateProfileStatus(change.about!));
    if (change.name !== undefined) await attempt('changing the name', () => sock.updateProfileName(change.name!));
  }

  async setProfilePicture(picture: { path: string } | null): Promise<void> {
    const sock = this.deps.live();
    const { jid } = this.me();
    if (picture) await attempt('setting the profile picture', () => sock.updateProfilePicture(jid, { url: picture.path }));
    else await attempt('removing the profile picture', () => sock.removeProfilePicture(jid));
  }

  async modifyChat(chatId: string, change: ChatChange): Promise<void> {
    const sock = this.deps.live();
    // Archive, unread and delete name the chat's last message (WhatsApp applies them up to it).
    const last = this.deps.book.lastMessage(chatId);
    const lastMessages = last ? [last] : [];
    let mod: ChatModification;
    switch (change.kind) {
      case 'archive':
        mod = { archive: change.archived, lastMessages };
        break;
      case 'pin':
        mod = { pin: change.pinned };
        break;
      case 'mute':
        mod = { mute: change.until };
        break;
      case 'unread':
        mod = { markRead: false, lastMessages };
        break;
      case 'delete':
        mod = { delete: true, lastMessages };
        break;
    }
    await attempt(`changing the chat (${change.kind})`, () => sock.chatModify(mod, chatId));
  }

  private requireBusiness(): void {
    if (!this.business) throw new GatewayError('NOT_BUSINESS', 'labels exist only on WhatsApp Business accounts; this account is a personal one');
  }

  async labels(): Promise<LabelInfo[]> {
    this.deps.live();
    this.requireBusiness();
    return this.deps.book.allLabels();
  }

  async labelChat(chatId: string, change: { add: string[]; remove: string[] }): Promise<void> {
    const sock = this.deps.live();
    this.requireBusiness();
    const unknown = [...change.add, ...change.remove].find((id) => !this.deps.book.hasLabel(id));
    if (unknown !== undefined) throw new GatewayError('NOT_FOUND', `no label ${JSON.stringify(unknown)} on this account (GET /api/{id}/labels lists them)`);
    for (const id of change.add) await attempt('labelling the chat', () => sock.addChatLabel(chatId, id));
    for (const id of change.remove) await attempt('unlabelling the chat', () => sock.removeChatLabel(chatId, id));
  }
}
