import type { GroupAction, PersonT } from '../schemas/account-events.js';

/**
 * What a connection can do around an account besides messages (contract part 3: groups, calls,
 * presence subscriptions). `participants` are E.164 numbers or JIDs; the connection asks WhatsApp
 * which numbers exist.
 */

/** What happened to one participant of a create or a participants change. */
export type ParticipantStatus =
  | 'added'
  /** WhatsApp refused a direct add (the person's privacy settings): an invite link was sent to them instead. */
  | 'invited'
  | 'not_on_whatsapp'
  | 'removed'
  | 'promoted'
  | 'demoted'
  | 'already_in_group'
  | 'not_in_group'
  | 'failed';

export interface ParticipantResult extends PersonT {
  status: ParticipantStatus;
  /** Why it failed, in WhatsApp's words (`failed` only). */
  error?: string;
}

export interface CreatedGroup {
  chatId: string;
  subject: string;
  participants: ParticipantResult[];
}

/** What PUT /groups/{chatId} changes; absent fields keep their value. */
export interface GroupSettings {
  subject?: string;
  /** "" removes the description. */
  description?: string;
  /** Only admins may write. */
  announce?: boolean;
  /** Only admins may change the group info. */
  locked?: boolean;
}

export interface GroupCapabilities {
  /** Creates a group with the account as its admin; refused and unknown people are reported per participant. */
  createGroup(subject: string, participants: string[]): Promise<CreatedGroup>;
  /** 403 NOT_GROUP_ADMIN where WhatsApp needs an admin; 404 NOT_FOUND for a group the account is not in. */
  updateGroup(chatId: string, settings: GroupSettings): Promise<void>;
  groupParticipants(chatId: string, action: GroupAction, participants: string[]): Promise<ParticipantResult[]>;
  /** The group's invite code; `revoke` makes WhatsApp issue a new one (the old link stops working). */
  groupInvite(chatId: string, revoke: boolean): Promise<string>;
  /** Joins by invite code; resolves with the group's chat id (404 NOT_FOUND for an unknown or revoked code). */
  joinGroup(code: string): Promise<string>;
  leaveGroup(chatId: string): Promise<void>;
  /** Sets (image bytes) or removes (null) the group's picture. */
  groupPicture(chatId: string, image: Uint8Array | null): Promise<void>;
}

export interface CallCapabilities {
  /** Rejects a call offered to the account; false when the call is not known (over, or never offered). */
  rejectCall(callId: string): Promise<boolean>;
}

export interface PresenceCapabilities {
  /** Asks WhatsApp for a person's presence (online, last seen, typing): presence.updated follows. */
  subscribePresence(chatId: string): Promise<void>;
}

/** What the connection needs to decrypt the votes on a poll (kept with the poll when it was sent or received). */
export interface PollKey {
  /** The poll's messageSecret, base64. */
  secret: string;
  options: string[];
  /** Whether the account created the poll (else `sender` did). */
  fromMe: boolean;
  sender: string | null;
}
