import { randomBytes, randomInt } from 'node:crypto';
import type { BinaryNode } from '@whiskeysockets/baileys';
import type { Contact, GroupLike } from './contact.js';
import type { Account } from './phone.js';

export interface GroupOptions {
  /** `lid` (WhatsApp's default for groups today) or `pn`. */
  addressingMode?: 'lid' | 'pn';
  description?: string;
  /** Members who are admins (the account is the creator and superadmin unless `creator` says otherwise). */
  admins?: Contact[];
  /** Who created it (default the account). */
  creator?: Contact;
}

type Member = { kind: 'account'; account: Account } | { kind: 'contact'; contact: Contact };

/** A 22-character invite code, as WhatsApp's look. */
export function newInviteCode(): string {
  return randomBytes(24).toString('base64').replace(/[^A-Za-z0-9]/g, '').slice(0, 22).padEnd(22, 'A');
}

/** A WhatsApp group on the double: the gateway's account plus simulated contacts. */
export class Group implements GroupLike {
  readonly jid: string;
  readonly addressingMode: 'lid' | 'pn';
  readonly creation = Math.floor(Date.now() / 1000);
  readonly members: Member[];
  description: string | undefined;
  subjectNow: string;
  /** Only admins may write. */
  announce = false;
  /** Only admins may change the group info. */
  locked = false;
  inviteCode = newInviteCode();
  /** The group's picture (a JPEG as the client sent it), if any. */
  picture: Buffer | null = null;
  /** Contacts who were in the group and are no longer: they must not read what is written after (groups.ts checks). */
  readonly former = new Set<Contact>();
  /** Admins besides the creator: contacts or accounts. */
  private readonly admins: Set<Contact | Account>;
  private readonly creator: Contact | undefined;
  /** The account the group was made with: its creator unless `creator` says otherwise. */
  private readonly creatorAccount: Account;

  constructor(
    readonly subject: string,
    account: Account,
    contacts: Contact[],
    options: GroupOptions = {},
  ) {
    this.jid = `120363${String(randomInt(0, 1e9)).padStart(9, '0')}${String(randomInt(0, 1e3)).padStart(3, '0')}@g.us`;
    this.addressingMode = options.addressingMode ?? 'lid';
    this.description = options.description;
    this.members = [{ kind: 'account', account }, ...contacts.map((contact) => ({ kind: 'contact' as const, contact }))];
    this.admins = new Set<Contact | Account>(options.admins ?? []);
    this.creator = options.creator;
    this.subjectNow = subject;
    this.creatorAccount = account;
  }

  /** The creator (the account unless `creator` was given) or an admin. */
  isAdmin(who: Contact | Account): boolean {
    if (this.creator ? who === this.creator : who === this.creatorAccount) return true;
    return this.admins.has(who);
  }

  setAdmin(who: Contact | Account, admin: boolean): void {
    if (admin) this.admins.add(who);
    else this.admins.delete(who);
  }

  addMember(who: Contact | Account): void {
    if ('phone' in who && 'device' in who) {
      if (!this.has(who)) this.members.push({ kind: 'contact', contact: who });
      this.former.delete(who);
    } else if (!this.hasAccount(who as Account)) {
      this.members.push({ kind: 'account', account: who as Account });
    }
  }

  /** Takes someone out; a contact joins `former`. */
  removeMember(who: Contact | Account): void {
    const i = this.members.findIndex((m) => (m.kind === 'contact' ? m.contact === who : m.account === who));
    if (i < 0) return;
    const [m] = this.members.splice(i, 1);
    this.admins.delete(who);
    if (m!.kind === 'contact') this.former.add(m!.contact);
  }

  accounts(): Account[] {
    return this.members.flatMap((m) => (m.kind === 'account' ? [m.account] : []));
  }

  contacts(): Contact[] {
    return this.members.flatMap((m) => (m.kind === 'contact' ? [m.contact] : []));
  }

  has(contact: Contact): boolean {
    return this.contacts().includes(contact);
  }

  hasAccount(account: Account): boolean {
    return this.accounts().includes(account);
  }

  /** The `<group>` node of a w:g2 answer (metadata query or `participating`). */
  toNode(): BinaryNode {
    const lid = this.addressingMode === 'lid';
    const accountJids = (a: Account) => ({ pn: `${a.phone}@s.whatsapp.net`, lid: `${a.lidUser}@lid` });
    const creator = this.creator ? { pn: this.creator.jid, lid: this.creator.lid } : accountJids(this.creatorAccount);
    const participants: BinaryNode[] = this.members.map((m) => {
      const ids = m.kind === 'account' ? { ...accountJids(m.account), hidden: false } : { pn: m.contact.jid, lid: m.contact.lid, hidden: m.contact.hidesPhone };
      const isCreator = ids.pn === creator.pn;
      const admin = isCreator ? 'superadmin' : this.admins.has(m.kind === 'contact' ? m.contact : m.account) ? 'admin' : undefined;
      const attrs: Record<string, string> = lid ? { jid: ids.lid, ...(ids.hidden ? {} : { phone_number: ids.pn }) } : { jid: ids.pn, lid: ids.lid };
      if (admin) attrs.type = admin;
      return { tag: 'participant', attrs };
    });
    const content: BinaryNode[] = [...participants];
    if (this.announce) content.push({ tag: 'announcement', attrs: {} });
    if (this.locked) content.push({ tag: 'locked', attrs: {} });
    if (this.description !== undefined) {
      content.push({ tag: 'description', attrs: { id: 'DESC1', t: String(this.creation) }, content: [{ tag: 'body', attrs: {}, content: Buffer.from(this.description) }] });
    }
    return {
      tag: 'group',
      attrs: {
        id: this.jid.split('@')[0]!,
        subject: this.subjectNow,
        s_t: String(this.creation),
        s_o: lid ? creator.lid : creator.pn,
        creation: String(this.creation),
        creator: lid ? creator.lid : creator.pn,
        ...(lid ? { creator_pn: creator.pn } : {}),
        addressing_mode: this.addressingMode,
        size: String(this.members.length),
      },
      content,
    };
  }
}
