import { createCipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { proto } from '@whiskeysockets/baileys';
import type { Contact, ContactMessage } from './contact.js';
import type { Group } from './group.js';

/**
 * A poll vote as WhatsApp's apps encrypt it, written from the protocol with node:crypto (the
 * gateway decrypts with Baileys' decryptPollVote): the vote names its options by SHA-256 and is
 * sealed with AES-256-GCM under a key derived from the poll's messageSecret, the poll's id, its
 * creator's JID and the voter's JID (HMAC-SHA256 twice), the poll id and voter JID as AAD.
 */
export function encryptVote(input: { secret: Uint8Array; pollId: string; creatorJid: string; voterJid: string; options: string[] }): { encPayload: Buffer; encIv: Buffer } {
  const plain = proto.Message.PollVoteMessage.encode({ selectedOptions: input.options.map((o) => createHash('sha256').update(o).digest()) }).finish();
  const sign = Buffer.concat([Buffer.from(input.pollId), Buffer.from(input.creatorJid), Buffer.from(input.voterJid), Buffer.from('Poll Vote'), Buffer.from([1])]);
  const key0 = createHmac('sha256', Buffer.alloc(32)).update(input.secret).digest();
  const key = createHmac('sha256', key0).update(sign).digest();
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(`${input.pollId}\u0000${input.voterJid}`));
  const encPayload = Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
  return { encPayload, encIv: iv };
}

/**
 * `voter` votes on a poll the account sent (`poll`, as the contact received it): a
 * pollUpdateMessage to the chat the poll came in (1:1 or a group), encrypted as WhatsApp does.
 * The creator and voter JIDs are the ones the chat uses: phone JIDs in a phone chat or a PN group,
 * LIDs in a LID group (and for a contact who writes from their LID). [] withdraws the vote.
 */
export async function vote(voter: Contact, poll: ContactMessage, options: string[], group?: Group): Promise<string> {
  const secret = poll.message.messageContextInfo?.messageSecret;
  if (!secret || secret.length === 0) throw new Error(`poll ${poll.id} carries no messageSecret`);
  const lid = group ? group.addressingMode === 'lid' : voter.addressing === 'lid';
  const creatorJid = lid ? poll.sender.lid.replace(/:\d+@/, '@') : poll.sender.jid.replace(/:\d+@/, '@');
  const voterJid = lid ? voter.lid : voter.jid;
  const vote = encryptVote({ secret, pollId: poll.id, creatorJid, voterJid, options });
  const to = poll.isGroup ? poll.chat : poll.sender.jid.replace(/:\d+@/, '@');
  return voter.send(
    to,
    {
      pollUpdateMessage: {
        pollCreationMessageKey: { remoteJid: to, fromMe: false, id: poll.id, ...(poll.isGroup ? { participant: creatorJid } : {}) },
        vote,
        senderTimestampMs: Date.now(),
      },
    },
    { type: 'poll' },
  );
}
