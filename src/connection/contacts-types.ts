/**
 * What a connection does for the account itself, beyond sending: contacts and the LID <-> phone
 * lookup, the block list, the profile, chat settings (archive, pin, mute, unread, delete) and
 * labels (business accounts). Both connections implement it (Baileys and the sandbox); the routes
 * reach it through `ConnectionActions.act`.
 */

/** One contact as the account sees it; `phone` and `lid` wherever either is known. */
export interface ContactInfo {
  /** The chat to write to: the phone JID when the number is known, else the LID. */
  chatId: string;
  phone?: string;
  /** `<digits>@lid`. */
  lid?: string;
  /** The name in the address book, else the name the contact gave themselves. */
  name?: string;
  /** The contact's "about" text, when its privacy lets the account see it. */
  about?: string;
  pictureUrl?: string;
  exists: boolean;
}

export interface BlockedContact {
  chatId: string;
  phone?: string;
}

export interface ProfileInfo {
  jid: string;
  phone: string;
  name: string;
  about: string;
  pictureUrl?: string;
  business: boolean;
}

/** A change of one chat's settings for this account (other people see nothing of it). */
export type ChatChange =
  | { kind: 'archive'; archived: boolean }
  | { kind: 'pin'; pinned: boolean }
  /** `until`: epoch ms, or null to unmute. */
  | { kind: 'mute'; until: number | null }
  | { kind: 'unread' }
  | { kind: 'delete' };

/** A label of a business account (WhatsApp Business: "New customer", "Pending payment", ...). */
export interface LabelInfo {
  id: string;
  name: string;
  /** WhatsApp's colour index (0 to 19). */
  color: number;
  /** The chats the label is on. */
  chats: string[];
}

/** A label changed (on the phone, another device, or through this gateway). */
export type LabelUpdate =
  | { kind: 'label'; labelId: string; name: string; color: number; deleted: boolean }
  | { kind: 'association'; labelId: string; chatId: string; labeled: boolean };

/** The account capabilities of a connection (see the top of this file). */
export interface AccountActions {
  /** A contact by chat id (phone JID or LID); the phone and LID filled in from the mapping, else from WhatsApp. */
  contactInfo(chatId: string): Promise<ContactInfo>;
  /** Blocks or unblocks a contact. */
  setBlocked(chatId: string, blocked: boolean): Promise<void>;
  blocklist(): Promise<BlockedContact[]>;
  profile(): Promise<ProfileInfo>;
  /** Changes the account's push name and/or about text. */
  updateProfile(change: { name?: string; about?: string }): Promise<void>;
  /** Sets the profile picture from a JPEG file, or removes it (null). */
  setProfilePicture(picture: { path: string } | null): Promise<void>;
  modifyChat(chatId: string, change: ChatChange): Promise<void>;
  /** Labels of a business account; 409 NOT_BUSINESS on a personal one. */
  labels(): Promise<LabelInfo[]>;
  /** Adds and removes labels on a chat; 409 NOT_BUSINESS on a personal account, 404 for an unknown label. */
  labelChat(chatId: string, change: { add: string[]; remove: string[] }): Promise<void>;
}
