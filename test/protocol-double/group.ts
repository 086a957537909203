import { randomInt } from 'node:crypto';
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

/** A WhatsApp group on the double: the gateway's account plus simulated contacts. */
export class Group implements GroupLike {
  readonly jid: string;
  readonly addressingMode: 'lid' | 'pn';
  readonly creation = Math.floor(Date.now() / 1000);
  readonly members: Member[];
  description: string | undefined;
  private readonly admins: Set<Contact>;
  private readonly creator: Contact | undefined;

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
    this.admins = new Set(options.admins ?? []);
    this.creator = options.creator;
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
    const creator = this.creator ? { pn: this.creator.jid, lid: this.creator.lid } : accountJids(this.accounts()[0]!);
    const participants: BinaryNode[] = this.members.map((m) => {
      const ids = m.kind === 'account' ? { ...accountJids(m.account), hidden: false } : { pn: m.contact.jid, lid: m.contact.lid, hidden: m.contact.hidesPhone };
      const isCreator = ids.pn === creator.pn;
      const admin = isCreator ? 'superadmin' : m.kind === 'contact' && this.admins.has(m.contact) ? 'admin' : undefined;
      const attrs: Record<string, string> = lid ? { jid: ids.lid, ...(ids.hidden ? {} : { phone_number: ids.pn }) } : { jid: ids.pn, lid: ids.lid };
      if (admin) attrs.type = admin;
      return { tag: 'participant', attrs };
    });
    const content: BinaryNode[] = [...participants];
    if (this.description !== undefined) {
      content.push({ tag: 'description', attrs: { id: 'DESC1', t: String(this.creation) }, content: [{ tag: 'body', attrs: {}, content: Buffer.from(this.description) }] });
    }
    return {
      tag: 'group',
      attrs: {
        id: this.jid.split('@')[0]!,
        subject: this.subject,
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
