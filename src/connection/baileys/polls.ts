import { decryptPollVote, jidNormalizedUser, normalizeMessageContent, sha256, toNumber, type proto, type WAMessage } from '@whiskeysockets/baileys';
import type { PollKey } from '../account-types.js';
import type { MessageUpdate } from '../types.js';
import { resolvePhone, type LidResolver } from './mapping.js';

/** The poll a message creates, with its secret, as a PollKey (null when it is not a poll or has no secret). */
export function pollKeyOf(message: proto.IMessage | null | undefined, fromMe: boolean, sender: string | null): PollKey | null {
  const content = normalizeMessageContent(message);
  const poll = content?.pollCreationMessage ?? content?.pollCreationMessageV2 ?? content?.pollCreationMessageV3;
  const secret = message?.messageContextInfo?.messageSecret ?? content?.messageContextInfo?.messageSecret;
  if (!poll || !secret || secret.length === 0) return null;
  return { secret: Buffer.from(secret).toString('base64'), options: (poll.options ?? []).map((o) => o.optionName ?? ''), fromMe, sender };
}

/** The poll a vote is about (its message id), or null when `msg` is not a vote. */
export function votedPoll(msg: WAMessage): string | null {
  const update = normalizeMessageContent(msg.message)?.pollUpdateMessage;
  return update?.pollCreationMessageKey?.id ?? null;
}

/**
 * Decrypts a vote (WhatsApp encrypts each with a key derived from the poll's secret, the poll's
 * id, its creator's and the voter's JIDs) and names the options it picks. Which JID of each
 * (phone or LID) the voter's app used is not on the wire, so each pair is tried; the AES-GCM tag
 * tells the right one. Null when none fits (not this poll's secret, or a JID never seen).
 */
export async function decryptVote(
  msg: WAMessage,
  poll: PollKey,
  me: { id?: string | null; lid?: string | null } | undefined,
  resolver: LidResolver,
  now: () => number,
): Promise<Extract<MessageUpdate, { kind: 'vote' }> | null> {
  const update = normalizeMessageContent(msg.message)?.pollUpdateMessage;
  const pollId = update?.pollCreationMessageKey?.id;
  const vote = update?.vote;
  if (!update || !pollId || !vote?.encPayload || !vote.encIv || !msg.key.remoteJid) return null;
  const { key } = msg;
  const isGroup = key.remoteJid!.endsWith('@g.us');
  const voterJid = key.fromMe ? (me?.lid ?? me?.id ?? null) : isGroup ? key.participant : key.remoteJid;
  const voterAlt = key.fromMe ? me?.id : isGroup ? key.participantAlt : key.remoteJidAlt;
  const normal = (j: string | null | undefined): string[] => (j ? [jidNormalizedUser(j)] : []);
  const voters = [...new Set([...normal(voterJid), ...normal(voterAlt)])];
  const creators = [...new Set(poll.fromMe ? [...normal(me?.id), ...normal(me?.lid)] : [...normal(poll.sender), ...normal(await pnOf(poll.sender, resolver))])];
  const secret = Buffer.from(poll.secret, 'base64');
  let decrypted: proto.Message.PollVoteMessage | null = null;
  for (const pollCreatorJid of creators) {
    for (const voter of voters) {
      try {
        decrypted = decryptPollVote({ encPayload: vote.encPayload, encIv: vote.encIv }, { pollCreatorJid, pollMsgId: pollId, pollEncKey: secret, voterJid: voter });
        break;
      } catch {
        // Not this pair: the tag did not match.
      }
    }
    if (decrypted) break;
  }
  if (!decrypted) return null;
  const byHash = new Map(poll.options.map((o) => [sha256(Buffer.from(o)).toString('hex'), o]));
  const selected = (decrypted.selectedOptions ?? []).flatMap((h) => byHash.get(Buffer.from(h).toString('hex')) ?? []);
  const sender = jidNormalizedUser(voterJid ?? voterAlt ?? key.remoteJid!);
  const phone = key.fromMe ? await resolvePhone(me?.id, null, resolver) : await resolvePhone(voterJid, voterAlt, resolver);
  const chatId = isGroup || !phone ? jidNormalizedUser(key.remoteJid!) : `${phone.slice(1)}@s.whatsapp.net`;
  const ms = toNumber(update.senderTimestampMs ?? 0) || toNumber(msg.messageTimestamp ?? 0) * 1000 || now();
  return { kind: 'vote', messageId: pollId, chatId, voter: { jid: sender, ...(phone ? { phone } : {}) }, selected, timestamp: new Date(ms).toISOString() };
}

async function pnOf(jid: string | null, resolver: LidResolver): Promise<string | null> {
  if (!jid || !jid.endsWith('@lid')) return null;
  const phone = await resolvePhone(jid, null, resolver);
  return phone ? `${phone.slice(1)}@s.whatsapp.net` : null;
}
