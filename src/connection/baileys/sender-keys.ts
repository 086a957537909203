import { jidDecode } from '@whiskeysockets/baileys';
import type { SocketLike } from './options.js';

/**
 * Sender-key rotation for groups. Baileys (rc14) encrypts every group message with one sender key
 * per group and hands it to each member once (`sender-key-memory`); it never makes a new one, so a
 * member who was removed keeps a key that decrypts everything the account writes later, should the
 * ciphertext reach them. WhatsApp's own apps rotate the key when someone leaves; so does this:
 * when a member is removed (by the account or by anyone, as the group notification says), the
 * account's sender key of that group and the memory of who has it are dropped, so the next group
 * message starts a new key and sends it (pairwise) to the members there are now, and only to them.
 *
 * The drop happens at once, and again right before the next send to the group: a send that was
 * already encrypting with the old key when the removal arrived writes Baileys' memory back after
 * it, and the second drop undoes that. Sends of one connection are one at a time (the pacing
 * queue), so nothing encrypts between that drop and the send it precedes.
 */
export class SenderKeyRotation {
  /** Groups whose key must be dropped again before their next send. */
  private readonly pending = new Set<string>();

  /** A member left `group`: drop the account's sender key now, and once more before the next send. */
  async rotate(sock: SocketLike, group: string): Promise<void> {
    this.pending.add(group);
    await drop(sock, group);
  }

  /** Called before anything is sent to `jid` (a group or not). */
  async beforeSend(sock: SocketLike, jid: string): Promise<void> {
    if (!this.pending.delete(jid)) return;
    await drop(sock, jid);
  }
}

/**
 * Baileys' names of the account's own sender key in a group (lib/Signal/libsignal.js
 * `jidToSignalSenderKeyName`: `group::user[_domain]::device`), for the PN and the LID identity: it
 * encrypts with the LID in LID-addressed groups and with the PN in the others.
 */
export function ownSenderKeyNames(group: string, me: { id?: string | null; lid?: string | null } | undefined): string[] {
  const names: string[] = [];
  for (const jid of [me?.id, me?.lid]) {
    const d = jid ? jidDecode(jid) : undefined;
    if (!d?.user) continue;
    const user = d.domainType ? `${d.user}_${d.domainType}` : d.user;
    names.push(`${group}::${user}::${d.device ?? 0}`);
  }
  return names;
}

async function drop(sock: SocketLike, group: string): Promise<void> {
  const keys = sock.authState?.keys;
  if (!keys) return;
  const names = ownSenderKeyNames(group, sock.user);
  const write = async (): Promise<void> => keys.set({ 'sender-key': Object.fromEntries(names.map((n) => [n, null])), 'sender-key-memory': { [group]: null } });
  // In the group's transaction: the one Baileys encrypts a group message in, so never halfway through one.
  await (keys.transaction ? keys.transaction(write, group) : write());
}
