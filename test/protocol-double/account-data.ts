import { randomBytes } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { proto } from '@whiskeysockets/baileys';
import { buildCollection, COLLECTIONS, type AppStateKey, type CollectionName, type CollectionState, type Mutation } from './app-state.js';

/**
 * What an account holds when a device links to it: WhatsApp gives a new companion device a
 * history sync (chats, their recent messages, push names, LID<->PN mappings), an app-state sync key
 * from the phone and the app-state collections (contacts, chat settings, labels, account settings)
 * encrypted with it, and, as members write in its groups, their sender keys.
 */
export interface AccountDataSpec {
  /** People in the address book (app-state contacts, push names, LID mappings). */
  contacts: number;
  /** Chats in the history sync: `groups` groups, the rest 1:1 with the first contacts. */
  chats: number;
  /** Messages in the history sync, all chats together. */
  messages: number;
  /** Groups the account is in (each with real members on the double). */
  groups: number;
  /** Members per group who write once after the first login (their sender keys reach the device). */
  groupSenders: number;
}

/** What a real account brings at first login, per issue 17. */
export const REALISTIC_ACCOUNT: AccountDataSpec = { contacts: 300, chats: 200, messages: 2000, groups: 5, groupSenders: 2 };

/** `'empty'` (default): only the contacts' LID mappings, no chats, app state unchanged. */
export type AccountDataOption = 'empty' | 'realistic' | AccountDataSpec;

export function resolveAccountData(option: AccountDataOption | undefined): AccountDataSpec | null {
  if (!option || option === 'empty') return null;
  if (option === 'realistic') return REALISTIC_ACCOUNT;
  return option;
}

/** Members per group (the account is one more). */
export const GROUP_MEMBERS = 8;
/** Messages per group in the history sync (the rest of `messages` goes to 1:1 chats). */
const GROUP_HISTORY = 20;

/** One person in the address book: real numbers on the double (a `Contact` can be made of any). */
export interface BookEntry {
  /** Digits, no `+`. */
  phone: string;
  jid: string;
  lidUser: string;
  lid: string;
  name: string;
}

const FIRST = ['Ana', 'Ben', 'Chloe', 'Dev', 'Emma', 'Farid', 'Grace', 'Hugo', 'Ines', 'Jon', 'Kira', 'Luis', 'Mia', 'Nils', 'Olga', 'Pedro', 'Qi', 'Rosa', 'Sam', 'Tara'];
const LAST = ['Silva', 'Meyer', 'Okafor', 'Tanaka', 'Novak', 'Haddad', 'Kowalski', 'Rossi', 'Dubois', 'Larsen', 'Nguyen', 'Patel', 'Costa', 'Berg'];

/**
 * The address book: `+1777…` numbers, LIDs derived as `Contact` derives them (2000… + the last 9
 * digits), so a contact made later of one of these numbers is the same person.
 */
export function addressBook(count: number): BookEntry[] {
  return Array.from({ length: count }, (_, i) => {
    const phone = `1777${String(i).padStart(7, '0')}`;
    const lidUser = `${200_000_000_000_000 + Number(phone.slice(-9))}`;
    return { phone, jid: `${phone}@s.whatsapp.net`, lidUser, lid: `${lidUser}@lid`, name: `${FIRST[i % FIRST.length]} ${LAST[Math.floor(i / FIRST.length) % LAST.length]}` };
  });
}

/** A small deterministic PRNG (mulberry32): the same spec gives the same history. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = 'ok sure see you tomorrow thanks for the photos can we move the meeting to friday I am on my way running late call me when you can did you get the invoice happy birthday lunch at noon the package arrived great news let me check and get back to you'.split(' ');

function sentence(rand: () => number): string {
  const n = 3 + Math.floor(rand() * 25);
  return Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ');
}

const msgId = (rand: () => number): string => `3EB0${Math.floor(rand() * 2 ** 48).toString(16).toUpperCase().padStart(12, '0')}${Math.floor(rand() * 2 ** 24).toString(16).toUpperCase().padStart(6, '0')}`;

/** One history message: mostly text, every 20th an image with a thumbnail, as real histories are. */
function historyMessage(rand: () => number, key: proto.IMessageKey, t: number, pushName: string | undefined, n: number): proto.IHistorySyncMsg {
  const message: proto.IMessage =
    n % 20 === 19
      ? {
          imageMessage: {
            url: 'https://mmg.whatsapp.net/v/t62.7118-24/history.enc',
            mimetype: 'image/jpeg',
            caption: rand() < 0.5 ? sentence(rand) : null,
            fileSha256: randomBytes(32),
            fileLength: 40_000 + Math.floor(rand() * 200_000),
            mediaKey: randomBytes(32),
            fileEncSha256: randomBytes(32),
            directPath: '/v/t62.7118-24/history.enc',
            mediaKeyTimestamp: t,
            jpegThumbnail: randomBytes(1200 + Math.floor(rand() * 1500)),
          },
        }
      : n % 7 === 3
        ? { extendedTextMessage: { text: sentence(rand) } }
        : { conversation: sentence(rand) };
  const info: proto.IWebMessageInfo = {
    key,
    message,
    messageTimestamp: t,
    status: key.fromMe ? proto.WebMessageInfo.Status.READ : proto.WebMessageInfo.Status.DELIVERY_ACK,
    ...(pushName && !key.fromMe ? { pushName } : {}),
  };
  return { message: info, msgOrderId: t * 1000 + n };
}

/** How the 1:1 chats share `messages`: whatever the groups do not take, spread evenly. */
function oneToOneCounts(spec: AccountDataSpec): number[] {
  const chats = Math.max(0, Math.min(spec.chats - spec.groups, spec.contacts));
  const total = Math.max(0, spec.messages - spec.groups * GROUP_HISTORY);
  const base = chats > 0 ? Math.floor(total / chats) : 0;
  const extra = chats > 0 ? total - base * chats : 0;
  return Array.from({ length: chats }, (_, i) => base + (i < extra ? 1 : 0));
}

/** Every third 1:1 chat is LID-addressed (after WhatsApp's LID migration), the rest by phone number. */
export const chatJidOf = (entry: BookEntry, i: number): string => (i % 3 === 2 ? entry.lid : entry.jid);

/**
 * The 1:1 part of the history (the RECENT sync): chats with the first contacts and their messages,
 * newest first, with tctokens, as proto.HistorySync bytes. The same for every account (the address
 * book is shared), so the double builds and uploads it once.
 */
export function recentHistory(spec: AccountDataSpec, book: BookEntry[], now = Math.floor(Date.now() / 1000)): Buffer {
  const rand = prng(17);
  const conversations: proto.IConversation[] = oneToOneCounts(spec).map((count, i) => {
    const entry = book[i]!;
    const id = chatJidOf(entry, i);
    const isLid = id === entry.lid;
    let t = now - Math.floor(rand() * 3600 * 24 * 3);
    const messages: proto.IHistorySyncMsg[] = [];
    for (let n = 0; n < count; n++) {
      const fromMe = rand() < 0.45;
      messages.push(historyMessage(rand, { remoteJid: id, fromMe, id: msgId(rand) }, t, entry.name, n));
      t -= 60 + Math.floor(rand() * 3600 * 6);
    }
    return {
      id,
      ...(isLid ? { pnJid: entry.jid } : { lidJid: entry.lid }),
      messages,
      unreadCount: i % 9 === 0 ? 2 : 0,
      conversationTimestamp: messages[0] ? Number(messages[0].message!.messageTimestamp) : now,
      tcToken: randomBytes(24),
      tcTokenTimestamp: now - 86_400,
      tcTokenSenderTimestamp: now - 86_400,
      endOfHistoryTransferType: proto.Conversation.EndOfHistoryTransferType.COMPLETE_BUT_MORE_MESSAGES_REMAIN_ON_PRIMARY,
    };
  });
  return Buffer.from(proto.HistorySync.encode({ syncType: proto.HistorySync.HistorySyncType.RECENT, conversations, progress: 100, chunkOrder: 1 }).finish());
}

/**
 * Someone who wrote to the account without being in its address book: WhatsApp's PUSH_NAME sync
 * carries their push name too, the only name a linked device learns for them.
 */
export const PUSH_NAME_ONLY = { phone: '17880000001', jid: '17880000001@s.whatsapp.net', name: 'Walk-in' } as const;

/** Push names of the whole address book and of PUSH_NAME_ONLY (the PUSH_NAME sync), shared by every account. */
export function pushNameHistory(book: BookEntry[]): Buffer {
  const pushnames = [...book.map((b) => ({ id: b.jid, pushname: b.name.split(' ')[0] })), { id: PUSH_NAME_ONLY.jid, pushname: PUSH_NAME_ONLY.name }];
  return Buffer.from(proto.HistorySync.encode({ syncType: proto.HistorySync.HistorySyncType.PUSH_NAME, pushnames, progress: 100, chunkOrder: 2 }).finish());
}

/** A group of the account as the history and app state see it. */
export interface GroupRef {
  jid: string;
  subject: string;
  members: BookEntry[];
}

/**
 * The INITIAL_BOOTSTRAP sync of one account (inline, deflated): LID<->PN mappings of the whole
 * address book (plus `extraMappings`) and the account's groups with their latest messages.
 */
export function bootstrapHistory(groups: GroupRef[], book: BookEntry[], extraMappings: Array<{ pnJid: string; lidJid: string }>, now = Math.floor(Date.now() / 1000)): Buffer {
  const rand = prng(29 + groups.length);
  const conversations: proto.IConversation[] = groups.map((g) => {
    let t = now - Math.floor(rand() * 3600 * 12);
    const messages: proto.IHistorySyncMsg[] = [];
    for (let n = 0; n < GROUP_HISTORY; n++) {
      const author = g.members[Math.floor(rand() * g.members.length)]!;
      const fromMe = rand() < 0.2;
      messages.push(historyMessage(rand, { remoteJid: g.jid, fromMe, id: msgId(rand), ...(fromMe ? {} : { participant: author.lid }) }, t, author.name, n));
      t -= 60 + Math.floor(rand() * 3600 * 3);
    }
    return { id: g.jid, name: g.subject, messages, conversationTimestamp: now, unreadCount: 1 };
  });
  const mappings = [...book.map((b) => ({ pnJid: b.jid, lidJid: b.lid })), ...extraMappings];
  const bytes = proto.HistorySync.encode({ syncType: proto.HistorySync.HistorySyncType.INITIAL_BOOTSTRAP, conversations, phoneNumberToLidMappings: mappings, progress: 100, chunkOrder: 0 }).finish();
  return deflateSync(bytes);
}

/**
 * The account's app state, every collection a snapshot then a few patches (an overwrite and a
 * removal among them, so the LT hash is exercised both ways):
 * - critical_block: push name, locale, "keep chats archived";
 * - critical_unblock_low: every address-book contact (full name, LID), one renamed later;
 * - regular_high: muted chats;
 * - regular: labels and the chats they label;
 * - regular_low: archived, pinned (one unpinned later) and read chats.
 */
export function accountAppState(key: AppStateKey, spec: AccountDataSpec, book: BookEntry[], groups: GroupRef[], accountName: string): Record<CollectionName, CollectionState> {
  const ts = Date.now();
  const chats = [...groups.map((g) => g.jid), ...oneToOneCounts(spec).map((_, i) => chatJidOf(book[i]!, i))];
  const chat = (i: number): string => chats[i % Math.max(1, chats.length)] ?? book[0]?.jid ?? 'status@broadcast';
  const range = { lastMessageTimestamp: Math.floor(ts / 1000) - 60 };
  const contact = (b: BookEntry, name = b.name): Mutation => ({
    index: ['contact', b.jid],
    value: { timestamp: ts, contactAction: { fullName: name, firstName: name.split(' ')[0], lidJid: b.lid, saveOnPrimaryAddressbook: true } },
    version: 2,
  });
  const mute = (jid: string): Mutation => ({ index: ['mute', jid], value: { timestamp: ts, muteAction: { muted: true, muteEndTimestamp: Math.floor(ts / 1000) + 8 * 3600 } }, version: 2 });
  const label = (id: number, name: string, color: number): Mutation => ({ index: ['label_edit', String(id)], value: { timestamp: ts, labelEditAction: { name, color, deleted: false } }, version: 3 });
  const labelled = (id: number, jid: string): Mutation => ({ index: ['label_jid', String(id), jid], value: { timestamp: ts, labelAssociationAction: { labeled: true } }, version: 3 });
  const archive = (jid: string): Mutation => ({ index: ['archive', jid], value: { timestamp: ts, archiveChatAction: { archived: true, messageRange: range } }, version: 3 });
  const pin = (jid: string, operation: Mutation['operation'] = 'set'): Mutation => ({ index: ['pin_v1', jid], value: { timestamp: ts, pinAction: { pinned: operation !== 'remove' } }, version: 5, operation });
  const read = (jid: string): Mutation => ({ index: ['markChatAsRead', jid], value: { timestamp: ts, markChatAsReadAction: { read: true, messageRange: range } }, version: 3 });
  const n = chats.length;
  const take = <T>(count: number, f: (i: number) => T): T[] => Array.from({ length: Math.max(0, Math.min(count, n)) }, (_, i) => f(i));

  const contactsInSnapshot = Math.max(0, book.length - 10);
  const spread = (from: number, count: number, step: number) => take(count, (i) => chat(from + i * step));
  const muted = spread(3, 10, 7);
  const archived = spread(4, 20, 3);
  const pinned = spread(0, 3, 1);
  const readChats = spread(1, 55, 2);
  const collections: Record<CollectionName, CollectionState> = {
    critical_block: buildCollection(
      'critical_block',
      key,
      [
        { index: ['setting_pushName'], value: { timestamp: ts, pushNameSetting: { name: accountName } }, version: 1 },
        { index: ['setting_locale'], value: { timestamp: ts, localeSetting: { locale: 'en_US' } }, version: 3 },
        { index: ['setting_unarchiveChats'], value: { timestamp: ts, unarchiveChatsSetting: { unarchiveChats: false } }, version: 4 },
      ],
      3,
      [],
    ),
    critical_unblock_low: buildCollection(
      'critical_unblock_low',
      key,
      book.slice(0, contactsInSnapshot).map((b) => contact(b)),
      41,
      [book.slice(contactsInSnapshot, contactsInSnapshot + 5).map((b) => contact(b)), book.slice(contactsInSnapshot + 5).map((b) => contact(b)), book.slice(0, 1).map((b) => contact(b, `${b.name} (work)`))].filter((p) => p.length > 0),
    ),
    regular_high: buildCollection('regular_high', key, muted.map(mute), 17, n > 20 ? [[mute(chat(20))]] : []),
    regular: buildCollection(
      'regular',
      key,
      [label(1, 'New customer', 1), label(2, 'Pending payment', 3), label(3, 'Important', 5), ...take(15, (i) => labelled(1 + (i % 3), chat(10 + i)))],
      9,
      n > 30 ? [[labelled(2, chat(30))]] : [],
    ),
    regular_low: buildCollection(
      'regular_low',
      key,
      [...archived.map(archive), ...pinned.map((j) => pin(j)), ...readChats.slice(0, 50).map(read)],
      120,
      [readChats.slice(50).map(read), pinned.length > 0 ? [pin(pinned[pinned.length - 1]!, 'remove')] : []].filter((p) => p.length > 0),
    ),
  };
  for (const name of COLLECTIONS) if (!collections[name]) throw new Error(`no ${name}`);
  return collections;
}
