import { randomBytes } from 'node:crypto';
import { GatewayError } from '../domain/errors.js';
import { isE164, phoneDigits } from '../domain/phone.js';
import type { AccountEvent, GroupAction, PersonT } from '../schemas/account-events.js';
import type { CreatedGroup, GroupSettings, ParticipantResult } from './account-types.js';
import type { GroupInfo, GroupSummary } from './types.js';

/** The sandbox account's own number: what `by` names when the instance itself changed a group. */
export const SANDBOX_ACCOUNT_PHONE = '+10000000000';
export const SANDBOX_ACCOUNT_JID = `${phoneDigits(SANDBOX_ACCOUNT_PHONE)}@s.whatsapp.net`;

interface SandboxGroup {
  chatId: string;
  subject: string;
  description?: string;
  announce: boolean;
  locked: boolean;
  /** Members by JID (the sandbox account among them while it is in the group), with whether each is an admin. */
  members: Map<string, boolean>;
  invite: string;
  picture: boolean;
}

/** A person as events show them: phone JIDs carry their phone. */
export function personOf(jid: string): PersonT {
  const user = jid.split('@')[0]!;
  return jid.endsWith('@s.whatsapp.net') && isE164(`+${user}`) ? { jid, phone: `+${user}` } : { jid };
}

/** "+15551234567" or a JID -> a JID. */
export function jidOf(who: string): string {
  return isE164(who) ? `${phoneDigits(who)}@s.whatsapp.net` : who;
}

/** What the sandbox plays from the other side of a group (POST /sandbox/group-event). */
export interface GroupEventInput {
  chatId: string;
  /** Who did it (a phone); default the group's first admin other than the account. */
  by?: string;
  action?: GroupAction;
  participants?: string[];
  subject?: string;
  description?: string;
  announce?: boolean;
  locked?: boolean;
}

/**
 * The sandbox's groups: made by the instance (it is their admin), named by inbound messages (it
 * is a plain member), or played with POST /sandbox/group-event. Every change, the instance's own
 * included, is reported as WhatsApp reports it: as an event naming who did it.
 */
export class SandboxGroups {
  private readonly groups = new Map<string, SandboxGroup>();

  constructor(
    private readonly emit: (event: AccountEvent) => Promise<void>,
    private readonly now: () => number,
  ) {}

  private iso(): string {
    return new Date(this.now()).toISOString();
  }

  private newGroup(chatId: string, subject: string): SandboxGroup {
    const g: SandboxGroup = { chatId, subject, announce: false, locked: false, members: new Map(), invite: inviteCode(), picture: false };
    this.groups.set(chatId, g);
    return g;
  }

  /** An inbound message named a group: the sandbox account is in it, and so is the sender. */
  noteSender(chatId: string, sender: string): void {
    const g = this.groups.get(chatId) ?? this.newGroup(chatId, `Sandbox group ${chatId.split('@')[0]}`);
    if (!g.members.has(SANDBOX_ACCOUNT_JID)) g.members.set(SANDBOX_ACCOUNT_JID, false);
    if (!g.members.has(sender)) g.members.set(sender, false);
  }

  list(): GroupSummary[] {
    return [...this.groups.values()].filter((g) => g.members.has(SANDBOX_ACCOUNT_JID)).map((g) => ({ chatId: g.chatId, subject: g.subject, size: g.members.size }));
  }

  info(chatId: string): GroupInfo | null {
    const g = this.groups.get(chatId);
    if (!g || !g.members.has(SANDBOX_ACCOUNT_JID)) return null;
    return {
      chatId,
      subject: g.subject,
      ...(g.description !== undefined ? { description: g.description } : {}),
      participants: [...g.members].map(([jid, admin]) => ({ ...personOf(jid), admin })),
      announce: g.announce,
      locked: g.locked,
    };
  }

  /** The group the account is in, or 404. */
  private mine(chatId: string): SandboxGroup {
    const g = this.groups.get(chatId);
    if (!g || !g.members.has(SANDBOX_ACCOUNT_JID)) throw new GatewayError('NOT_FOUND', 'no such group (or the account is not in it)');
    return g;
  }

  private requireAdmin(g: SandboxGroup, what: string): void {
    if (!g.members.get(SANDBOX_ACCOUNT_JID)) throw new GatewayError('NOT_GROUP_ADMIN', `only a group admin may ${what}`);
  }

  async create(subject: string, participants: string[]): Promise<CreatedGroup> {
    const chatId = `120363${String(Math.floor(Math.random() * 1e12)).padStart(12, '0')}@g.us`;
    const g = this.newGroup(chatId, subject);
    g.members.set(SANDBOX_ACCOUNT_JID, true);
    const results: ParticipantResult[] = [];
    for (const p of participants) {
      const jid = jidOf(p);
      g.members.set(jid, false);
      results.push({ ...personOf(jid), status: 'added' });
    }
    await this.emit({ type: 'group.joined', data: { chatId, subject, by: personOf(SANDBOX_ACCOUNT_JID), timestamp: this.iso() } });
    return { chatId, subject, participants: results };
  }

  async update(chatId: string, settings: GroupSettings): Promise<void> {
    const g = this.mine(chatId);
    // Anyone may edit the info of an unlocked group; who may write and lock it is an admin's call.
    if (settings.announce !== undefined || settings.locked !== undefined) this.requireAdmin(g, 'change who may write or edit');
    if ((settings.subject !== undefined || settings.description !== undefined) && g.locked) this.requireAdmin(g, 'edit the info of a locked group');
    if (settings.subject !== undefined) g.subject = settings.subject;
    if (settings.description !== undefined) {
      if (settings.description === '') delete g.description;
      else g.description = settings.description;
    }
    if (settings.announce !== undefined) g.announce = settings.announce;
    if (settings.locked !== undefined) g.locked = settings.locked;
    await this.emit({ type: 'group.updated', data: { chatId, ...settings, by: personOf(SANDBOX_ACCOUNT_JID), timestamp: this.iso() } });
  }

  async participants(chatId: string, action: GroupAction, list: string[]): Promise<ParticipantResult[]> {
    const g = this.mine(chatId);
    this.requireAdmin(g, `${action} participants`);
    const results = list.map((p) => this.apply(g, action, jidOf(p)));
    const changed = results.filter((r) => r.status === 'added' || r.status === 'removed' || r.status === 'promoted' || r.status === 'demoted');
    if (changed.length > 0) {
      await this.emit({ type: 'group.participants', data: { chatId, action, participants: changed.map(({ jid, phone }) => ({ jid, ...(phone !== undefined ? { phone } : {}) })), by: personOf(SANDBOX_ACCOUNT_JID), timestamp: this.iso() } });
    }
    return results;
  }

  private apply(g: SandboxGroup, action: GroupAction, jid: string): ParticipantResult {
    const person = personOf(jid);
    const member = g.members.has(jid);
    switch (action) {
      case 'add':
        if (member) return { ...person, status: 'already_in_group' };
        g.members.set(jid, false);
        return { ...person, status: 'added' };
      case 'remove':
        if (!member) return { ...person, status: 'not_in_group' };
        g.members.delete(jid);
        return { ...person, status: 'removed' };
      case 'promote':
      case 'demote':
        if (!member) return { ...person, status: 'not_in_group' };
        g.members.set(jid, action === 'promote');
        return { ...person, status: action === 'promote' ? 'promoted' : 'demoted' };
    }
  }

  async invite(chatId: string, revoke: boolean): Promise<string> {
    const g = this.mine(chatId);
    this.requireAdmin(g, 'see or reset the invite link');
    if (revoke) g.invite = inviteCode();
    return g.invite;
  }

  async join(code: string): Promise<string> {
    const g = [...this.groups.values()].find((x) => x.invite === code);
    if (!g) throw new GatewayError('NOT_FOUND', 'no group has this invite code (unknown, or reset)');
    if (!g.members.has(SANDBOX_ACCOUNT_JID)) {
      g.members.set(SANDBOX_ACCOUNT_JID, false);
      await this.emit({ type: 'group.joined', data: { chatId: g.chatId, subject: g.subject, by: personOf(SANDBOX_ACCOUNT_JID), timestamp: this.iso() } });
    }
    return g.chatId;
  }

  async leave(chatId: string): Promise<void> {
    const g = this.mine(chatId);
    g.members.delete(SANDBOX_ACCOUNT_JID);
    await this.emit({ type: 'group.participants', data: { chatId, action: 'remove', participants: [personOf(SANDBOX_ACCOUNT_JID)], by: personOf(SANDBOX_ACCOUNT_JID), timestamp: this.iso() } });
  }

  async picture(chatId: string, set: boolean): Promise<void> {
    const g = this.mine(chatId);
    if (g.locked) this.requireAdmin(g, 'change the picture of a locked group');
    g.picture = set;
  }

  /** Whether the group has a picture (for tests of the picture routes). */
  hasPicture(chatId: string): boolean {
    return this.groups.get(chatId)?.picture ?? false;
  }

  /**
   * Plays what someone else did to a group: a participants change (adding the sandbox account is
   * how it joins a group someone else made), or a change of its info and settings. An unknown group
   * is made on the spot, with `by` as its admin.
   */
  async play(input: GroupEventInput): Promise<void> {
    const by = input.by !== undefined ? jidOf(input.by) : undefined;
    let g = this.groups.get(input.chatId);
    if (!g) {
      g = this.newGroup(input.chatId, input.subject ?? `Sandbox group ${input.chatId.split('@')[0]}`);
      if (by) g.members.set(by, true);
    }
    const actor = by ?? [...g.members].find(([jid, admin]) => admin && jid !== SANDBOX_ACCOUNT_JID)?.[0];
    const byPerson = actor ? personOf(actor) : null;
    const timestamp = this.iso();
    if (input.action && input.participants && input.participants.length > 0) {
      const wasIn = g.members.has(SANDBOX_ACCOUNT_JID);
      const results = input.participants.map((p) => this.apply(g, input.action!, jidOf(p)));
      const changed = results.filter((r) => r.status !== 'already_in_group' && r.status !== 'not_in_group').map(({ jid, phone }) => ({ jid, ...(phone !== undefined ? { phone } : {}) }));
      if (!wasIn && g.members.has(SANDBOX_ACCOUNT_JID)) await this.emit({ type: 'group.joined', data: { chatId: g.chatId, subject: g.subject, by: byPerson, timestamp } });
      if (changed.length > 0) await this.emit({ type: 'group.participants', data: { chatId: g.chatId, action: input.action, participants: changed, by: byPerson, timestamp } });
    }
    const settings: GroupSettings = {};
    if (input.subject !== undefined && input.subject !== g.subject) settings.subject = g.subject = input.subject;
    if (input.description !== undefined) {
      settings.description = input.description;
      if (input.description === '') delete g.description;
      else g.description = input.description;
    }
    if (input.announce !== undefined) settings.announce = g.announce = input.announce;
    if (input.locked !== undefined) settings.locked = g.locked = input.locked;
    if (Object.keys(settings).length > 0 && g.members.has(SANDBOX_ACCOUNT_JID)) {
      await this.emit({ type: 'group.updated', data: { chatId: g.chatId, ...settings, by: byPerson, timestamp } });
    }
  }
}

/** An invite code as WhatsApp's look: 22 letters and digits. */
function inviteCode(): string {
  return randomBytes(24).toString('base64').replace(/[^A-Za-z0-9]/g, '').slice(0, 22).padEnd(22, 'A');
}
