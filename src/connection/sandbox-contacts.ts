import { GatewayError } from '../domain/errors.js';
import { SANDBOX_ACCOUNT_PHONE } from './sandbox-groups.js';
import type { AccountActions, BlockedContact, ChatChange, ContactInfo, LabelInfo, LabelUpdate, ProfileInfo } from './contacts-types.js';

/** What the sandbox account did to its chats and contacts (shown by GET /sandbox/actions). */
export interface SandboxContactsAction {
  action: 'archive' | 'unarchive' | 'pin' | 'unpin' | 'mute' | 'unmute' | 'unread' | 'delete-chat' | 'block' | 'unblock' | 'label-add' | 'label-remove' | 'profile' | 'picture';
  chatId?: string;
  labelId?: string;
  text?: string;
}

/** A contact as the sandbox plays it (POST /sandbox/contact). */
export interface SandboxContact {
  phone?: string;
  lid?: string;
  name?: string;
  about?: string;
  pictureUrl?: string;
  exists?: boolean;
}

export interface SandboxContactsDeps {
  instanceId: string;
  /** Throws CONNECTION_NOT_READY unless connected. */
  requireConnected(): void;
  onLabel?(update: LabelUpdate): Promise<void>;
  record(action: SandboxContactsAction): void;
}


const phoneJid = (phone: string): string => `${phone.slice(1)}@s.whatsapp.net`;

/** The simulated account's phone: the same for every sandbox, and never a contact's (see sandbox-groups.ts). */
export function sandboxPhone(): string {
  return SANDBOX_ACCOUNT_PHONE;
}

/**
 * The account side of a sandbox connection: contacts (every E.164 number exists; LIDs map to the
 * numbers inbound messages or POST /sandbox/contact gave them), a block list, a profile, chat
 * settings, and labels when the sandbox plays a Business account (POST /sandbox/account).
 */
export class SandboxContacts implements AccountActions {
  private readonly people = new Map<string, SandboxContact>();
  /** LID JID -> phone. */
  private readonly lids = new Map<string, string>();
  private readonly blocked = new Set<string>();
  private readonly labelMap = new Map<string, { name: string; color: number; chats: Set<string> }>();
  private me = { name: 'Sandbox', about: '', picture: false, business: false };

  constructor(private readonly deps: SandboxContactsDeps) {}

  // ---- played by the sandbox routes ---------------------------------------------------------

  /** A contact's details (name, about, picture, LID), as WhatsApp would tell them. */
  playContact(contact: SandboxContact): void {
    if (contact.lid && contact.phone) this.lids.set(`${contact.lid}@lid`, contact.phone);
    const key = contact.phone ? phoneJid(contact.phone) : `${contact.lid}@lid`;
    this.people.set(key, { ...this.people.get(key), ...contact });
  }

  /** A LID and its number learnt from a received message. */
  learnLid(lid: string, phone: string): void {
    this.lids.set(lid, phone);
  }

  /** The account type (personal or Business), and its push name. */
  playAccount(change: { business?: boolean; name?: string }): void {
    if (change.business !== undefined) this.me.business = change.business;
    if (change.name !== undefined) this.me.name = change.name;
  }

  /** A label made, changed or deleted on the phone (a `label.updated` event). */
  async playLabel(label: { id: string; name: string; color?: number; deleted?: boolean }): Promise<void> {
    this.deps.requireConnected();
    this.requireBusiness();
    const color = label.color ?? 0;
    if (label.deleted) this.labelMap.delete(label.id);
    else this.labelMap.set(label.id, { name: label.name, color, chats: this.labelMap.get(label.id)?.chats ?? new Set() });
    await this.deps.onLabel?.({ kind: 'label', labelId: label.id, name: label.name, color, deleted: label.deleted === true });
  }

  // ---- AccountActions -----------------------------------------------------------------------

  async contactInfo(chatId: string): Promise<ContactInfo> {
    this.deps.requireConnected();
    const lid = chatId.endsWith('@lid') ? chatId : [...this.lids.entries()].find(([, p]) => phoneJid(p) === chatId)?.[0];
    const phone = chatId.endsWith('@lid') ? this.lids.get(chatId) : `+${chatId.split('@')[0]}`;
    const known = (phone ? this.people.get(phoneJid(phone)) : undefined) ?? (lid ? this.people.get(lid) : undefined) ?? {};
    return {
      chatId: phone ? phoneJid(phone) : chatId,
      ...(phone ? { phone } : {}),
      ...(lid ? { lid } : {}),
      ...(known.name ? { name: known.name } : {}),
      ...(known.about ? { about: known.about } : {}),
      ...(known.pictureUrl ? { pictureUrl: known.pictureUrl } : {}),
      exists: known.exists ?? true,
    };
  }

  async setBlocked(chatId: string, blocked: boolean): Promise<void> {
    this.deps.requireConnected();
    if (blocked) this.blocked.add(chatId);
    else this.blocked.delete(chatId);
    this.deps.record({ action: blocked ? 'block' : 'unblock', chatId });
  }

  async blocklist(): Promise<BlockedContact[]> {
    this.deps.requireConnected();
    return [...this.blocked].map((chatId) => {
      const phone = chatId.endsWith('@s.whatsapp.net') ? `+${chatId.split('@')[0]}` : this.lids.get(chatId);
      return { chatId: phone ? phoneJid(phone) : chatId, ...(phone ? { phone } : {}) };
    });
  }

  async profile(): Promise<ProfileInfo> {
    this.deps.requireConnected();
    const phone = sandboxPhone();
    return {
      jid: phoneJid(phone),
      phone,
      name: this.me.name,
      about: this.me.about,
      ...(this.me.picture ? { pictureUrl: `https://sandbox.invalid/profile/${this.deps.instanceId}.jpg` } : {}),
      business: this.me.business,
    };
  }

  async updateProfile(change: { name?: string; about?: string }): Promise<void> {
    this.deps.requireConnected();
    if (change.name !== undefined) this.me.name = change.name;
    if (change.about !== undefined) this.me.about = change.about;
    this.deps.record({ action: 'profile', text: JSON.stringify(change) });
  }

  async setProfilePicture(picture: { path: string } | null): Promise<void> {
    this.deps.requireConnected();
    this.me.picture = picture !== null;
    this.deps.record({ action: 'picture', text: picture ? 'set' : 'removed' });
  }

  async modifyChat(chatId: string, change: ChatChange): Promise<void> {
    this.deps.requireConnected();
    const action: SandboxContactsAction['action'] =
      change.kind === 'archive'
        ? change.archived
          ? 'archive'
          : 'unarchive'
        : change.kind === 'pin'
          ? change.pinned
            ? 'pin'
            : 'unpin'
          : change.kind === 'mute'
            ? change.until === null
              ? 'unmute'
              : 'mute'
            : change.kind === 'unread'
              ? 'unread'
              : 'delete-chat';
    this.deps.record({ action, chatId, ...(change.kind === 'mute' && change.until !== null ? { text: new Date(change.until).toISOString() } : {}) });
  }

  private requireBusiness(): void {
    if (!this.me.business) throw new GatewayError('NOT_BUSINESS', 'labels exist only on WhatsApp Business accounts; this sandbox plays a personal one (POST /sandbox/account {"business": true} changes that)');
  }

  async labels(): Promise<LabelInfo[]> {
    this.deps.requireConnected();
    this.requireBusiness();
    return [...this.labelMap.entries()].map(([id, l]) => ({ id, name: l.name, color: l.color, chats: [...l.chats] }));
  }

  async labelChat(chatId: string, change: { add: string[]; remove: string[] }): Promise<void> {
    this.deps.requireConnected();
    this.requireBusiness();
    const unknown = [...change.add, ...change.remove].find((id) => !this.labelMap.has(id));
    if (unknown !== undefined) throw new GatewayError('NOT_FOUND', `no label ${JSON.stringify(unknown)} on this account (GET /api/{id}/labels lists them)`);
    for (const [ids, labeled] of [
      [change.add, true],
      [change.remove, false],
    ] as const) {
      for (const labelId of ids) {
        const label = this.labelMap.get(labelId)!;
        if (label.chats.has(chatId) === labeled) continue;
        if (labeled) label.chats.add(chatId);
        else label.chats.delete(chatId);
        this.deps.record({ action: labeled ? 'label-add' : 'label-remove', chatId, labelId });
        await this.deps.onLabel?.({ kind: 'association', labelId, chatId, labeled });
      }
    }
  }
}
