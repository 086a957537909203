import type { BinaryNode } from '@whiskeysockets/baileys';
import type { Contact } from './contact.js';
import type { Group } from './group.js';
import type { Account, Device } from './phone.js';

/** What presence needs from the double's server. */
export interface PresenceWire {
  account(phone?: string): Account;
  contactByJid(jid: string): Contact | undefined;
  devicesOf(account: Account): Device[];
  /** Sends to the device's live sessions only: presence is not queued for later, as WhatsApp's is not. */
  push(device: Device, node: BinaryNode): void;
  logLine(line: string): void;
}

/** What a contact saw of the account: its presence (available, unavailable) and chat states (composing, paused). */
export interface SeenPresence {
  state: string;
  media?: string;
}

/**
 * Presence on the double: the account's devices subscribe to a contact (`<presence
 * type="subscribe">`) and are told its presence now and each change; a contact types or records
 * (`<chatstate>`), in a 1:1 chat or a group; what the account shows (`available`, `unavailable`,
 * and its chat states) is recorded as each contact would see it.
 */
export class PresenceOps {
  /** Contacts each account follows. */
  private readonly subscriptions = new Map<Account, Set<Contact>>();
  private readonly current = new Map<Contact, { available: boolean; lastSeen?: number }>();
  /** Everything each contact saw of the account, in order. */
  private readonly seenBy = new Map<Contact, SeenPresence[]>();
  /** Subscriptions the account's devices made, in order (JIDs as sent). */
  readonly subscribed: string[] = [];

  constructor(private readonly wire: PresenceWire) {}

  /** What `contact` saw of the account so far. */
  seen(contact: Contact): readonly SeenPresence[] {
    return this.seenBy.get(contact) ?? [];
  }

  private saw(contact: Contact, p: SeenPresence): void {
    const list = this.seenBy.get(contact) ?? [];
    list.push(p);
    this.seenBy.set(contact, list);
  }

  /** A `<presence>` from a linked device: a subscription, or the account going online or offline. */
  fromDevice(device: Device, node: BinaryNode, allContacts: Iterable<Contact>): void {
    const type = node.attrs.type;
    if (type === 'subscribe') {
      const to = node.attrs.to ?? '';
      this.subscribed.push(to);
      const contact = this.wire.contactByJid(to);
      if (!contact) return;
      const subs = this.subscriptions.get(device.account) ?? new Set<Contact>();
      subs.add(contact);
      this.subscriptions.set(device.account, subs);
      // WhatsApp answers a subscription with the presence as it is now.
      this.wire.push(device, this.presenceNode(contact, to));
      return;
    }
    // The account's own presence reaches everyone who follows it; the double's contacts all do.
    if (type === 'available' || type === 'unavailable') for (const c of allContacts) this.saw(c, { state: type });
  }

  /** A `<chatstate>` from a linked device, as the contact it is for sees it. */
  chatState(contact: Contact, node: BinaryNode): void {
    const child = Array.isArray(node.content) ? node.content[0] : undefined;
    if (child) this.saw(contact, { state: child.tag, ...(child.attrs.media ? { media: child.attrs.media } : {}) });
  }

  /** `contact` goes online or offline (with when it was last seen); the accounts that follow it are told. */
  set(contact: Contact, available: boolean, lastSeen?: Date): void {
    this.current.set(contact, { available, ...(lastSeen ? { lastSeen: Math.floor(lastSeen.getTime() / 1000) } : {}) });
    for (const [account, contacts] of this.subscriptions) {
      if (!contacts.has(contact)) continue;
      for (const device of this.wire.devicesOf(account)) this.wire.push(device, this.presenceNode(contact, contact.address));
    }
    this.wire.logLine(`${contact.phone} is ${available ? 'available' : 'unavailable'}`);
  }

  /** `contact` types (`composing`), records a voice note (`recording`) or stops (`paused`), to the account or in a group. */
  type(contact: Contact, state: 'composing' | 'recording' | 'paused', where: { group?: Group; phone?: string } = {}): void {
    const child: BinaryNode = state === 'recording' ? { tag: 'composing', attrs: { media: 'audio' } } : { tag: state, attrs: {} };
    const group = where.group;
    const attrs: Record<string, string> = group
      ? { from: group.jid, participant: group.addressingMode === 'lid' ? contact.lid : contact.jid }
      : { from: contact.address };
    const accounts = group ? group.accounts() : [this.wire.account(where.phone)];
    for (const account of accounts) for (const device of this.wire.devicesOf(account)) this.wire.push(device, { tag: 'chatstate', attrs, content: [child] });
  }

  private presenceNode(contact: Contact, from: string): BinaryNode {
    const now = this.current.get(contact) ?? { available: false };
    return {
      tag: 'presence',
      attrs: { from, ...(now.available ? {} : { type: 'unavailable' }), ...(now.lastSeen !== undefined && !now.available ? { last: String(now.lastSeen) } : {}) },
    };
  }
}
