import { getBinaryNodeChild, getBinaryNodeChildren, type BinaryNode } from '@whiskeysockets/baileys';
import { Contact, newStanzaId } from './contact.js';
import { Group, newInviteCode } from './group.js';
import type { MediaHost } from './media.js';
import type { Account, Device } from './phone.js';

/** What the group operations need from the double's server. */
export interface GroupsWire {
  readonly groups: Map<string, Group>;
  readonly media: Pick<MediaHost, 'put'>;
  account(phone?: string): Account;
  contactByJid(jid: string): Contact | undefined;
  accountByJid(jid: string): Account | undefined;
  devicesOf(account: Account): Device[];
  deliver(device: Device, node: BinaryNode): void;
  error(what: string): void;
  logLine(line: string): void;
}

type Who = Contact | Account;
const isContact = (w: Who): w is Contact => w instanceof Contact;

const nowSeconds = (): string => String(Math.floor(Date.now() / 1000));

function iqError(result: BinaryNode, code: number, text: string): BinaryNode {
  return { tag: 'iq', attrs: { ...result.attrs, type: 'error' }, content: [{ tag: 'error', attrs: { code: String(code), text } }] };
}

/**
 * Groups as WhatsApp runs them, for the double: the `w:g2` operations a client sends (create,
 * subject, description, settings, participants, invite link, join, leave) and the group picture,
 * with WhatsApp's checks (members only, admins where WhatsApp needs them, people whose privacy
 * refuses a direct add); every change is announced to the members' linked devices as a `w:gp2`
 * notification; when someone leaves, the contacts still in the group rotate their sender keys,
 * and whoever left is checked never to decrypt what the account writes afterwards.
 */
export class GroupOps {
  /** Contacts whose privacy settings refuse a direct add (WhatsApp answers 403 with an invite code instead). */
  readonly refusingAdds = new Set<Contact>();
  /** What the server told the account's devices, in order (the notifications' children). */
  readonly notifications: Array<{ group: string; tag: string; by: string }> = [];

  constructor(private readonly wire: GroupsWire) {}

  /** `contact`'s privacy settings refuse being added to groups directly (WhatsApp's "who can add me": nobody). */
  refuseAdds(contact: Contact): void {
    this.refusingAdds.add(contact);
  }

  // ---- what contacts do (the tests play them) -------------------------------------------------

  /** `by` (an admin) adds people; the account among them joins. */
  async add(group: Group, who: Who[], by: Who): Promise<void> {
    for (const w of who) group.addMember(w);
    this.notify(group, { tag: 'add', attrs: {}, content: who.map((w) => this.participantNode(group, w)) }, by, who.filter((w): w is Account => !isContact(w)));
  }

  /** `by` (an admin, or the person themselves: leaving) takes people out. */
  async remove(group: Group, who: Who[], by: Who): Promise<void> {
    const leaving = who.filter((w): w is Account => !isContact(w));
    const node: BinaryNode = { tag: 'remove', attrs: {}, content: who.map((w) => this.participantNode(group, w)) };
    for (const w of who) group.removeMember(w);
    await this.rotateContacts(group);
    this.notify(group, node, by, leaving);
  }

  async promote(group: Group, who: Who[], by: Who, admin = true): Promise<void> {
    for (const w of who) group.setAdmin(w, admin);
    this.notify(group, { tag: admin ? 'promote' : 'demote', attrs: {}, content: who.map((w) => this.participantNode(group, w)) }, by);
  }

  async setSubject(group: Group, subject: string, by: Contact): Promise<void> {
    group.subjectNow = subject;
    this.notify(group, { tag: 'subject', attrs: { subject, s_t: nowSeconds() } }, by);
  }

  async setDescription(group: Group, description: string, by: Contact): Promise<void> {
    group.description = description === '' ? undefined : description;
    this.notify(group, description === '' ? { tag: 'description', attrs: { id: newStanzaId(), delete: 'true' } } : { tag: 'description', attrs: { id: newStanzaId() }, content: [{ tag: 'body', attrs: {}, content: Buffer.from(description) }] }, by);
  }

  async setSettings(group: Group, settings: { announce?: boolean; locked?: boolean }, by: Contact): Promise<void> {
    if (settings.announce !== undefined) {
      group.announce = settings.announce;
      this.notify(group, { tag: settings.announce ? 'announcement' : 'not_announcement', attrs: {} }, by);
    }
    if (settings.locked !== undefined) {
      group.locked = settings.locked;
      this.notify(group, { tag: settings.locked ? 'locked' : 'unlocked', attrs: {} }, by);
    }
  }

  // ---- what the account's devices ask (w:g2 and the group picture) ---------------------------

  /** A `w:g2` set (or the invite-link get) from a linked device; null when it is not one of these. */
  async answer(device: Device, node: BinaryNode, result: BinaryNode): Promise<BinaryNode | null> {
    const child = Array.isArray(node.content) ? node.content[0] : undefined;
    const to = node.attrs.to ?? '';
    const account = device.account;
    if (!child) return null;
    if (to === '@g.us' && node.attrs.type === 'set') {
      if (child.tag === 'create') return this.create(account, child, result);
      if (child.tag === 'invite') return this.join(account, child.attrs.code ?? '', result);
      if (child.tag === 'leave') {
        const id = getBinaryNodeChild(child, 'group')?.attrs.id ?? '';
        const group = this.wire.groups.get(id.includes('@') ? id : `${id}@g.us`);
        if (!group || !group.hasAccount(account)) return iqError(result, 404, 'item-not-found');
        await this.remove(group, [account], account);
        return result;
      }
      return null;
    }
    const group = this.wire.groups.get(to);
    if (!group) return to.endsWith('@g.us') && node.attrs.type === 'set' ? iqError(result, 404, 'item-not-found') : null;
    if (child.tag === 'invite' && node.attrs.type === 'get') {
      if (!group.hasAccount(account)) return iqError(result, 404, 'item-not-found');
      if (!group.isAdmin(account)) return iqError(result, 403, 'not-authorized');
      return { ...result, content: [{ tag: 'invite', attrs: { code: group.inviteCode } }] };
    }
    if (node.attrs.type !== 'set') return null;
    if (!group.hasAccount(account)) return iqError(result, 404, 'item-not-found');
    const admin = group.isAdmin(account);
    const infoAllowed = admin || !group.locked;
    switch (child.tag) {
      case 'subject': {
        if (!infoAllowed) return iqError(result, 403, 'not-authorized');
        const subject = Buffer.from((child.content as Uint8Array | undefined) ?? []).toString();
        group.subjectNow = subject;
        this.notify(group, { tag: 'subject', attrs: { subject, s_t: nowSeconds() } }, account);
        return result;
      }
      case 'description': {
        if (!infoAllowed) return iqError(result, 403, 'not-authorized');
        const body = getBinaryNodeChild(child, 'body');
        const text = body?.content ? Buffer.from(body.content as Uint8Array).toString() : '';
        group.description = child.attrs.delete === 'true' ? undefined : text;
        this.notify(group, child.attrs.delete === 'true' ? { tag: 'description', attrs: { id: newStanzaId(), delete: 'true' } } : { tag: 'description', attrs: { id: child.attrs.id ?? newStanzaId() }, content: [{ tag: 'body', attrs: {}, content: Buffer.from(text) }] }, account);
        return result;
      }
      case 'announcement':
      case 'not_announcement':
      case 'locked':
      case 'unlocked': {
        if (!admin) return iqError(result, 403, 'not-authorized');
        if (child.tag.endsWith('announcement')) group.announce = child.tag === 'announcement';
        else group.locked = child.tag === 'locked';
        this.notify(group, { tag: child.tag, attrs: {} }, account);
        return result;
      }
      case 'invite': {
        if (!admin) return iqError(result, 403, 'not-authorized');
        group.inviteCode = newInviteCode();
        return { ...result, content: [{ tag: 'invite', attrs: { code: group.inviteCode } }] };
      }
      case 'add':
      case 'remove':
      case 'promote':
      case 'demote':
        if (!admin) return iqError(result, 403, 'not-authorized');
        return this.participants(group, account, child, result);
      default:
        return null;
    }
  }

  /**
   * `w:profile:picture` with a group `target`: a get answers with the picture's URL (404
   * item-not-found when the group has none, as WhatsApp does); a set (a `<picture>`) or removal
   * changes it.
   */
  picture(device: Device, node: BinaryNode, result: BinaryNode): BinaryNode {
    const group = this.wire.groups.get(node.attrs.target ?? '');
    if (!group || !group.hasAccount(device.account)) return iqError(result, 404, 'item-not-found');
    if (node.attrs.type === 'get') {
      if (!group.picture) return iqError(result, 404, 'item-not-found');
      const stored = this.wire.media.put(group.picture, 'image');
      return { ...result, content: [{ tag: 'picture', attrs: { id: '1', type: 'image', url: stored.url } }] };
    }
    if (group.locked && !group.isAdmin(device.account)) return iqError(result, 403, 'not-authorized');
    const picture = getBinaryNodeChild(node, 'picture');
    const bytes = picture?.content instanceof Uint8Array ? Buffer.from(picture.content) : null;
    if (bytes && !(bytes[0] === 0xff && bytes[1] === 0xd8)) this.wire.error(`the picture set for ${group.jid} is not a JPEG`);
    group.picture = bytes;
    return result;
  }

  private create(account: Account, child: BinaryNode, result: BinaryNode): BinaryNode {
    const group = new Group(child.attrs.subject ?? '', account, []);
    this.wire.groups.set(group.jid, group);
    const refused: BinaryNode[] = [];
    for (const p of getBinaryNodeChildren(child, 'participant')) {
      const jid = p.attrs.jid ?? '';
      const who = this.whoIs(jid);
      if (!who) refused.push({ tag: 'participant', attrs: { jid, error: '404' } });
      else if (isContact(who) && this.refusingAdds.has(who)) refused.push({ tag: 'participant', attrs: { jid, error: '403' }, content: [this.addRequest()] });
      else group.addMember(who);
    }
    const node = group.toNode();
    this.notify(group, { tag: 'create', attrs: {}, content: [node] }, account);
    return { ...result, content: [{ ...node, content: [...(node.content as BinaryNode[]), ...refused] }] };
  }

  private join(account: Account, code: string, result: BinaryNode): BinaryNode {
    const group = [...this.wire.groups.values()].find((g) => g.inviteCode === code);
    if (!group) return iqError(result, 406, 'not-acceptable');
    if (!group.hasAccount(account)) {
      group.addMember(account);
      this.notify(group, { tag: 'add', attrs: { reason: 'invite' }, content: [this.participantNode(group, account)] }, account);
    }
    return { ...result, content: [{ tag: 'group', attrs: { jid: group.jid } }] };
  }

  private participants(group: Group, account: Account, child: BinaryNode, result: BinaryNode): BinaryNode {
    const action = child.tag as 'add' | 'remove' | 'promote' | 'demote';
    const answers: BinaryNode[] = [];
    const changed: Who[] = [];
    for (const p of getBinaryNodeChildren(child, 'participant')) {
      const jid = p.attrs.jid ?? '';
      const who = this.whoIs(jid);
      const member = who !== undefined && (isContact(who) ? group.has(who) : group.hasAccount(who));
      let error: string | undefined;
      const extra: BinaryNode[] = [];
      if (!who) error = '404';
      else if (action === 'add') {
        if (member) error = '409';
        else if (isContact(who) && this.refusingAdds.has(who)) {
          error = '403';
          extra.push(this.addRequest());
        }
      } else if (!member) error = '404';
      if (error === undefined) changed.push(who!);
      answers.push({ tag: 'participant', attrs: { jid, ...(error ? { error } : {}) }, ...(extra.length > 0 ? { content: extra } : {}) });
    }
    if (changed.length > 0) {
      const failed = (err: unknown) => this.wire.error(`${action} in ${group.jid} failed: ${err instanceof Error ? err.stack : String(err)}`);
      if (action === 'add') this.add(group, changed, account).catch(failed);
      else if (action === 'remove') this.remove(group, changed, account).catch(failed);
      else {
        for (const w of changed) group.setAdmin(w, action === 'promote');
        this.notify(group, { tag: action, attrs: {}, content: changed.map((w) => this.participantNode(group, w)) }, account);
      }
    }
    return { ...result, content: [{ tag: action, attrs: {}, content: answers }] };
  }

  private addRequest(): BinaryNode {
    return { tag: 'add_request', attrs: { code: newInviteCode(), expiration: String(Math.floor(Date.now() / 1000) + 3 * 86400) } };
  }

  private whoIs(jid: string): Who | undefined {
    return this.wire.contactByJid(jid) ?? this.wire.accountByJid(jid);
  }

  /** Everyone still in the group writes with a new sender key from now on (the double's contacts are WhatsApp apps). */
  private async rotateContacts(group: Group): Promise<void> {
    for (const c of group.contacts()) await c.rotateSenderKey(group.jid);
  }

  /** How a group's stanzas name someone: LID (with the phone) in LID groups, the phone JID in PN ones. */
  private ids(group: Group, who: Who): { jid: string; alt?: string } {
    const pn = isContact(who) ? who.jid : `${who.phone}@s.whatsapp.net`;
    const lid = isContact(who) ? who.lid : `${who.lidUser}@lid`;
    const hidden = isContact(who) && who.hidesPhone;
    return group.addressingMode === 'lid' ? { jid: lid, ...(hidden ? {} : { alt: pn }) } : { jid: pn, alt: lid };
  }

  private participantNode(group: Group, who: Who): BinaryNode {
    const { jid, alt } = this.ids(group, who);
    return { tag: 'participant', attrs: { jid, ...(alt ? (group.addressingMode === 'lid' ? { phone_number: alt } : { lid: alt }) : {}) } };
  }

  /**
   * A `w:gp2` notification to the linked devices of every account in the group (and of accounts
   * that just left it), naming who did it (`participant`, with the other address beside it).
   */
  private notify(group: Group, child: BinaryNode, by: Who, alsoTo: Account[] = []): void {
    const actor = this.ids(group, by);
    const lid = group.addressingMode === 'lid';
    const attrs: Record<string, string> = {
      from: group.jid,
      type: 'w:gp2',
      id: newStanzaId(),
      t: nowSeconds(),
      participant: actor.jid,
      addressing_mode: group.addressingMode,
      ...(actor.alt ? (lid ? { participant_pn: actor.alt } : { participant_lid: actor.alt }) : {}),
    };
    this.notifications.push({ group: group.jid, tag: child.tag, by: actor.jid });
    const accounts = [...new Set([...group.accounts(), ...alsoTo])];
    // After the answer to the iq that caused it (the server answers, then tells the members).
    setImmediate(() => {
      for (const account of accounts) for (const device of this.wire.devicesOf(account)) this.wire.deliver(device, { tag: 'notification', attrs, content: [child] });
      this.wire.logLine(`${group.jid} ${child.tag} by ${actor.jid}`);
    });
  }

  /**
   * A group message from a linked device reached its members; those who left must not be able to
   * read it: each former member tries the `skmsg` with the sender keys they kept. Success means the
   * sender did not rotate its key when they left.
   */
  async checkFormerMembers(group: Group, device: Device, node: BinaryNode, skmsg: BinaryNode | undefined): Promise<void> {
    if (!skmsg) return;
    const author = group.addressingMode === 'pn' ? device.jid : device.lid;
    for (const former of group.former) {
      let read = false;
      try {
        await former.device.repo.decryptGroupMessage({ group: group.jid, authorJid: author, msg: skmsg.content as Uint8Array });
        read = true;
      } catch {
        // Cannot decrypt: as it must be.
      }
      if (read) this.wire.error(`${former.phone} left ${group.jid} but could decrypt ${node.attrs.id ?? ''} from ${device.jid}: the sender key was not rotated`);
    }
  }
}
