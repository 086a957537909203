import type { AccountActions, BlockedContact, ContactInfo, LabelInfo, ProfileInfo } from '../../src/connection/contacts-types.js';
import { GatewayError } from '../../src/domain/errors.js';

const unsupported = (): never => {
  throw new GatewayError('CONNECTION_NOT_READY', 'this fake connection has no account actions');
};

/** A base for fake connections that script no account actions (contacts, profile, chats, labels). */
export class NoAccountActions implements AccountActions {
  async contactInfo(): Promise<ContactInfo> {
    return unsupported();
  }
  async setBlocked(): Promise<void> {
    unsupported();
  }
  async blocklist(): Promise<BlockedContact[]> {
    return unsupported();
  }
  async profile(): Promise<ProfileInfo> {
    return unsupported();
  }
  async updateProfile(): Promise<void> {
    unsupported();
  }
  async setProfilePicture(): Promise<void> {
    unsupported();
  }
  async modifyChat(): Promise<void> {
    unsupported();
  }
  async labels(): Promise<LabelInfo[]> {
    return unsupported();
  }
  async labelChat(): Promise<void> {
    unsupported();
  }
}
