import { generateMessageIDV2, generateWAMessageFromContent, getBinaryNodeChild, getBinaryNodeChildren, jidNormalizedUser, type BinaryNode } from '@whiskeysockets/baileys';
import { GatewayError } from '../../domain/errors.js';
import { isE164 } from '../../domain/phone.js';
import type { GroupAction } from '../../schemas/account-events.js';
import type { CreatedGroup, GroupSettings, ParticipantResult, ParticipantStatus } from '../account-types.js';
import type { AccountSocketMember, SocketLike } from './options.js';
import { toJid } from './outgoing.js';
import type { SenderKeyRotation } from './sender-keys.js';

/** A member of the real socket (every one is there; a test double may leave some out). */
function need<K extends AccountSocketMember>(sock: SocketLike, name: K): NonNullable<SocketLike[K]> {
  const member = sock[name];
  if (member === undefined) throw new Error(`this socket has no ${name}`);
  return member as NonNullable<SocketLike[K]>;
}

/**
 * WhatsApp's refusals as the gateway's errors: Baileys turns an `<error code>` answer into a Boom
 * whose `data` is the code. 403: only an admin may (or the account is not allowed); 404 / 406 /
 * 410: no such group, or an unknown, malformed or reset invite code.
 */
export function groupError(err: unknown, what: string): unknown {
  if (err instanceof GatewayError) return err;
  const code = typeof err === 'object' && err !== null ? (err as { data?: unknown }).data : undefined;
  if (code === 403 || code === 401) return new GatewayError('NOT_GROUP_ADMIN', `WhatsApp allows only a group admin to ${what}`, { cause: err });
  if (code === 404 || code === 406 || code === 410) return new GatewayError('NOT_FOUND', `WhatsApp knows no such group (or the account is not in it, or the invite code is unknown or was reset): could not ${what}`, { cause: err });
  return err;
}

async function asGroupCall<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw groupError(err, what);
  }
}

interface Resolved {
  /** As given: an E.164 number or a JID. */
  input: string;
  jid: string;
  phone?: string;
  exists: boolean;
}

/** Participants as JIDs; for numbers, whether they have WhatsApp (asked once, for all of them). */
async function resolve(sock: SocketLike, inputs: string[], askExistence: boolean): Promise<Resolved[]> {
  const phones = inputs.filter((p) => isE164(p));
  const known = new Map<string, string>();
  if (askExistence && phones.length > 0) {
    const found = (await sock.onWhatsApp(...phones.map((p) => toJid(p)))) ?? [];
    for (const f of found) if (f.exists) known.set(jidNormalizedUser(f.jid).split('@')[0]!, jidNormalizedUser(f.jid));
  }
  return inputs.map((input) => {
    if (!isE164(input)) return { input, jid: input, ...phoneOfJid(input), exists: true };
    const digits = input.slice(1);
    const jid = known.get(digits) ?? `${digits}@s.whatsapp.net`;
    return { input, jid, phone: input, exists: !askExistence || known.has(digits) };
  });
}

function phoneOfJid(jid: string): { phone?: string } {
  const user = jid.split('@')[0]!;
  return jid.endsWith('@s.whatsapp.net') && isE164(`+${user}`) ? { phone: `+${user}` } : {};
}

/** The `<participant>` of WhatsApp's answer that is about `r` (by JID, by the phone it names, else none). */
function answerFor(nodes: BinaryNode[], r: Resolved): BinaryNode | undefined {
  return nodes.find((n) => {
    const jid = n.attrs.jid ? jidNormalizedUser(n.attrs.jid) : '';
    return jid === r.jid || (n.attrs.phone_number !== undefined && jidNormalizedUser(n.attrs.phone_number) === r.jid) || (n.attrs.lid !== undefined && jidNormalizedUser(n.attrs.lid) === r.jid);
  });
}

const DONE: Record<GroupAction, ParticipantStatus> = { add: 'added', remove: 'removed', promote: 'promoted', demote: 'demoted' };

/**
 * One participant's outcome from WhatsApp's answer. 403 with an `<add_request>`: their privacy
 * settings refused the add, and WhatsApp gave a code to invite them with (sent by the caller); 409:
 * already in; 404: not in the group (or, for an add, not on WhatsApp).
 */
function outcome(action: GroupAction, r: Resolved, node: BinaryNode | undefined): { status: ParticipantStatus; error?: string; invite?: { code: string; expiration: number } } {
  if (!r.exists) return { status: 'not_on_whatsapp' };
  if (!node) return { status: 'failed', error: 'WhatsApp did not say what became of this participant' };
  const code = node.attrs.error;
  if (code === undefined || code === '200') return { status: DONE[action] };
  const request = getBinaryNodeChild(node, 'add_request');
  if (action === 'add' && code === '403' && request?.attrs.code) {
    return { status: 'invited', invite: { code: request.attrs.code, expiration: Number(request.attrs.expiration ?? '0') } };
  }
  if (code === '409') return { status: action === 'add' ? 'already_in_group' : 'failed', ...(action === 'add' ? {} : { error: 'WhatsApp refused (409)' }) };
  if (code === '404') return { status: action === 'add' ? 'not_on_whatsapp' : 'not_in_group' };
  return { status: 'failed', error: `WhatsApp refused (error ${code})` };
}

/**
 * What a person sees when a direct add was refused: a group invite they can accept. Built and
 * relayed here rather than with sendMessage({ groupInvite }): that one asks WhatsApp for the group's
 * picture first and fails outright (404 item-not-found) for a group without one, the common case.
 * The invite goes without a thumbnail; WhatsApp shows the group's initials instead.
 */
async function sendInvite(sock: SocketLike, to: string, group: { jid: string; subject: string }, invite: { code: string; expiration: number }): Promise<void> {
  const content = {
    groupInviteMessage: { groupJid: group.jid, groupName: group.subject, inviteCode: invite.code, inviteExpiration: invite.expiration, caption: `Join "${group.subject}" on WhatsApp` },
  };
  const message = generateWAMessageFromContent(to, content, { userJid: sock.user?.id ?? '' });
  await need(sock, 'relayMessage')(to, message.message!, { messageId: message.key.id! });
}

async function results(sock: SocketLike, action: GroupAction, resolved: Resolved[], nodes: BinaryNode[], group: { jid: string; subject: string }): Promise<ParticipantResult[]> {
  const out: ParticipantResult[] = [];
  for (const r of resolved) {
    const node = r.exists ? answerFor(nodes, r) : undefined;
    const o = outcome(action, r, node);
    const phone = r.phone ?? (node?.attrs.phone_number ? phoneOfJid(jidNormalizedUser(node.attrs.phone_number)).phone : undefined);
    let status = o.status;
    let error = o.error;
    if (o.invite) {
      try {
        await sendInvite(sock, r.jid, group, o.invite);
      } catch (err) {
        status = 'failed';
        error = `their privacy settings refused the add, and the invite could not be sent: ${err instanceof Error ? err.message : String(err)}`;
      }
    }
    out.push({ jid: r.jid, ...(phone !== undefined ? { phone } : {}), status, ...(error !== undefined ? { error } : {}) });
  }
  return out;
}

/**
 * Creates a group: WhatsApp answers with the group and, per participant, an `error` where it did
 * not add them. Baileys' groupCreate keeps only the metadata (it drops those errors), so the
 * query is made here as Baileys makes it (lib/Socket/groups.js) and the answer read in full.
 */
export async function createGroup(sock: SocketLike, subject: string, participants: string[]): Promise<CreatedGroup> {
  const query = need(sock, 'query');
  const resolved = await resolve(sock, participants, true);
  const jids = resolved.filter((r) => r.exists).map((r) => r.jid);
  const answer = (await asGroupCall('create a group', () =>
    query({
      tag: 'iq',
      attrs: { type: 'set', xmlns: 'w:g2', to: '@g.us' },
      content: [{ tag: 'create', attrs: { subject, key: generateMessageIDV2() }, content: jids.map((jid) => ({ tag: 'participant', attrs: { jid } })) }],
    }),
  )) as BinaryNode | undefined;
  const group = getBinaryNodeChild(answer, 'group');
  if (!group?.attrs.id) throw new Error('WhatsApp did not answer the group creation with a group');
  const jid = group.attrs.id.includes('@') ? group.attrs.id : `${group.attrs.id}@g.us`;
  const created = { jid, subject: group.attrs.subject ?? subject };
  return { chatId: jid, subject: created.subject, participants: await results(sock, 'add', resolved, getBinaryNodeChildren(group, 'participant'), created) };
}

export async function groupParticipants(sock: SocketLike, rotation: SenderKeyRotation, chatId: string, action: GroupAction, participants: string[]): Promise<ParticipantResult[]> {
  const update = need(sock, 'groupParticipantsUpdate');
  const resolved = await resolve(sock, participants, action === 'add');
  const jids = resolved.filter((r) => r.exists).map((r) => r.jid);
  const answers = jids.length === 0 ? [] : await asGroupCall(`${action} participants`, () => update(chatId, jids, action));
  const nodes: BinaryNode[] = answers.map((a) => {
    const jid = a.content.attrs.jid ?? a.jid ?? '';
    return { ...a.content, attrs: { ...a.content.attrs, jid, ...(a.status !== '200' ? { error: a.status } : {}) } };
  });
  let subject = '';
  if (action === 'add' && nodes.some((n) => n.attrs.error === '403')) subject = (await sock.groupMetadata(chatId).catch(() => null))?.subject ?? '';
  const out = await results(sock, action, resolved, nodes, { jid: chatId, subject });
  // Someone left: the next group message starts a new sender key (see sender-keys.ts).
  if (action === 'remove' && out.some((r) => r.status === 'removed')) await rotation.rotate(sock, chatId);
  return out;
}

export async function updateGroup(sock: SocketLike, chatId: string, settings: GroupSettings): Promise<void> {
  if (settings.subject !== undefined) {
    const subject = settings.subject;
    await asGroupCall('change the subject', () => need(sock, 'groupUpdateSubject')(chatId, subject));
  }
  if (settings.description !== undefined) {
    const description = settings.description;
    await asGroupCall('change the description', () => need(sock, 'groupUpdateDescription')(chatId, description === '' ? undefined : description));
  }
  if (settings.announce !== undefined) {
    const announce = settings.announce;
    await asGroupCall('change who may write', () => need(sock, 'groupSettingUpdate')(chatId, announce ? 'announcement' : 'not_announcement'));
  }
  if (settings.locked !== undefined) {
    const locked = settings.locked;
    await asGroupCall('change who may edit the group info', () => need(sock, 'groupSettingUpdate')(chatId, locked ? 'locked' : 'unlocked'));
  }
}

export async function groupInvite(sock: SocketLike, chatId: string, revoke: boolean): Promise<string> {
  const code = await asGroupCall(revoke ? 'reset the invite link' : 'see the invite link', () => (revoke ? need(sock, 'groupRevokeInvite')(chatId) : need(sock, 'groupInviteCode')(chatId)));
  if (!code) throw new Error('WhatsApp answered without an invite code');
  return code;
}

export async function joinGroup(sock: SocketLike, code: string): Promise<string> {
  const jid = await asGroupCall('join by this invite code', () => need(sock, 'groupAcceptInvite')(code));
  if (!jid) throw new GatewayError('NOT_FOUND', 'WhatsApp knows no group with this invite code');
  return jidNormalizedUser(jid);
}

export async function leaveGroup(sock: SocketLike, chatId: string): Promise<void> {
  await asGroupCall('leave the group', () => need(sock, 'groupLeave')(chatId));
}

/** Baileys makes a 640x640 JPEG of it (with sharp, its dependency). */
export async function groupPicture(sock: SocketLike, chatId: string, image: Uint8Array | null): Promise<void> {
  if (image === null) await asGroupCall('remove the picture', () => need(sock, 'removeProfilePicture')(chatId));
  else await asGroupCall('change the picture', () => need(sock, 'updateProfilePicture')(chatId, Buffer.from(image)));
}
