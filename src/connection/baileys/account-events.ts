import { WAMessageStubType, jidNormalizedUser, toNumber, type BinaryNode, type WACallEvent, type WAMessage } from '@whiskeysockets/baileys';
import type { AccountEvent, GroupAction, PersonT, PresenceState } from '../../schemas/account-events.js';
import { resolvePhone, type LidResolver } from './mapping.js';

/**
 * What WhatsApp tells about an account besides messages, as the gateway's events: group
 * notifications (Baileys turns each into a message with a stub type and JSON parameters, see
 * lib/Socket/messages-recv.js handleGroupNotification), presence and chat states (the raw
 * `<presence>` / `<chatstate>` stanzas: Baileys' presence.update says `available` for a paused chat
 * state, which the contract tells apart), and call offers.
 */

type Me = { id?: string | null; lid?: string | null } | undefined;

export async function person(jid: string, alt: string | null | undefined, resolver: LidResolver): Promise<PersonT> {
  const normal = jidNormalizedUser(jid);
  const phone = await resolvePhone(normal, alt ? jidNormalizedUser(alt) : null, resolver);
  return { jid: normal, ...(phone ? { phone } : {}) };
}

function isMe(p: { jid: string; phone?: string }, me: Me): boolean {
  const mine = [me?.id, me?.lid].filter((x): x is string => !!x).map((j) => jidNormalizedUser(j));
  return mine.includes(p.jid) || (p.phone !== undefined && mine.includes(`${p.phone.slice(1)}@s.whatsapp.net`));
}

/** One participant of a stub's parameters: `{"id", "phoneNumber"?, "lid"?, "admin"}` (JSON). */
async function stubParticipant(raw: string, resolver: LidResolver): Promise<PersonT | null> {
  try {
    const p = JSON.parse(raw) as { id?: string; phoneNumber?: string; lid?: string };
    return p.id ? await person(p.id, p.phoneNumber ?? null, resolver) : null;
  } catch {
    return null;
  }
}

const PARTICIPANT_ACTIONS = new Map<number, GroupAction>([
  [WAMessageStubType.GROUP_PARTICIPANT_ADD, 'add'],
  [WAMessageStubType.GROUP_PARTICIPANT_INVITE, 'add'],
  [WAMessageStubType.GROUP_PARTICIPANT_ADD_REQUEST_JOIN, 'add'],
  [WAMessageStubType.GROUP_PARTICIPANT_REMOVE, 'remove'],
  [WAMessageStubType.GROUP_PARTICIPANT_LEAVE, 'remove'],
  [WAMessageStubType.GROUP_PARTICIPANT_PROMOTE, 'promote'],
  [WAMessageStubType.GROUP_PARTICIPANT_DEMOTE, 'demote'],
]);

const on = (v: string | undefined): boolean => v === 'on' || v === 'true';

/**
 * What a group notification (a stub message in a group) is, as events; [] for anything else.
 * `actorAlt` gives the other address of who did it, by notification id: the stanza names it
 * (`participant_pn`), but the stub message Baileys makes of it loses it (MessageKey has no such
 * field), so account.ts reads it off the raw stanza.
 */
export async function groupEvents(msg: WAMessage, me: Me, resolver: LidResolver, now: () => number, actorAlt: (id: string) => string | undefined = () => undefined): Promise<AccountEvent[]> {
  const chatId = msg.key.remoteJid;
  const stub = msg.messageStubType;
  if (!chatId || !chatId.endsWith('@g.us') || !stub) return [];
  const params = msg.messageStubParameters ?? [];
  const by = msg.key.participant ? await person(msg.key.participant, msg.key.participantAlt ?? (msg.key.id ? actorAlt(msg.key.id) : undefined), resolver) : null;
  const seconds = toNumber(msg.messageTimestamp ?? 0);
  const timestamp = new Date(seconds > 0 ? seconds * 1000 : now()).toISOString();
  const base = { chatId: jidNormalizedUser(chatId), by, timestamp };
  if (stub === WAMessageStubType.GROUP_CREATE) return [{ type: 'group.joined', data: { ...base, ...(params[0] !== undefined ? { subject: params[0] } : {}) } }];
  const action = PARTICIPANT_ACTIONS.get(stub);
  if (action) {
    const participants = (await Promise.all(params.map((p: string) => stubParticipant(p, resolver)))).filter((p): p is PersonT => p !== null);
    const out: AccountEvent[] = [];
    if (action === 'add' && participants.some((p) => isMe(p, me))) out.push({ type: 'group.joined', data: base });
    out.push({ type: 'group.participants', data: { ...base, action, participants } });
    return out;
  }
  switch (stub) {
    case WAMessageStubType.GROUP_CHANGE_SUBJECT:
      return [{ type: 'group.updated', data: { ...base, subject: params[0] ?? '' } }];
    case WAMessageStubType.GROUP_CHANGE_DESCRIPTION:
      return [{ type: 'group.updated', data: { ...base, description: params[0] ?? '' } }];
    case WAMessageStubType.GROUP_CHANGE_ANNOUNCE:
      return [{ type: 'group.updated', data: { ...base, announce: on(params[0]) } }];
    case WAMessageStubType.GROUP_CHANGE_RESTRICT:
      return [{ type: 'group.updated', data: { ...base, locked: on(params[0]) } }];
    default:
      return [];
  }
}

/** Whether a group notification took someone out of the group (their sender key must go: see sender-keys.ts). */
export function removesMember(msg: WAMessage): boolean {
  return msg.messageStubType === WAMessageStubType.GROUP_PARTICIPANT_REMOVE || msg.messageStubType === WAMessageStubType.GROUP_PARTICIPANT_LEAVE;
}

/**
 * A `<presence from type? last?>` (online, or offline with last seen) or a `<chatstate from
 * participant?>` with `<composing media?>` / `<paused>` (typing, recording, stopped) as
 * presence.updated; null for anything else (groups' online counts, our own).
 */
export async function presenceEvent(node: BinaryNode, me: Me, resolver: LidResolver): Promise<AccountEvent | null> {
  const from = node.attrs.from;
  if (!from) return null;
  const isGroup = from.endsWith('@g.us');
  const who = isGroup ? node.attrs.participant : from;
  if (!who || who.endsWith('@g.us') || who.endsWith('@broadcast') || who === 's.whatsapp.net') return null;
  let state: PresenceState;
  let lastSeen: string | undefined;
  if (node.tag === 'presence') {
    if (isGroup) return null;
    state = node.attrs.type === 'unavailable' ? 'unavailable' : 'available';
    const last = Number(node.attrs.last);
    if (Number.isFinite(last) && last > 0) lastSeen = new Date(last * 1000).toISOString();
  } else {
    const child = Array.isArray(node.content) ? node.content[0] : undefined;
    if (child?.tag === 'composing') state = child.attrs.media === 'audio' ? 'recording' : 'typing';
    else if (child?.tag === 'paused') state = 'paused';
    else return null;
  }
  const p = await person(who, node.attrs.participant_pn ?? node.attrs.sender_pn ?? null, resolver);
  if (isMe(p, me)) return null;
  const chatId = isGroup ? jidNormalizedUser(from) : p.phone ? `${p.phone.slice(1)}@s.whatsapp.net` : p.jid;
  return { type: 'presence.updated', data: { chatId, from: p.phone ?? null, sender: p.jid, state, ...(lastSeen ? { lastSeen } : {}) } };
}

/** A call offer as call.received (other call updates are not events). */
export async function callEvent(call: WACallEvent, resolver: LidResolver): Promise<AccountEvent | null> {
  if (call.status !== 'offer') return null;
  const p = await person(call.from, call.callerPn ?? null, resolver);
  const isGroup = call.isGroup === true;
  const chatId = isGroup && call.groupJid ? jidNormalizedUser(call.groupJid) : p.phone ? `${p.phone.slice(1)}@s.whatsapp.net` : p.jid;
  return {
    type: 'call.received',
    data: { callId: call.id, chatId, from: p.phone ?? null, sender: p.jid, isVideo: call.isVideo === true, isGroup, timestamp: (Number.isNaN(call.date.getTime()) ? new Date() : call.date).toISOString() },
  };
}
