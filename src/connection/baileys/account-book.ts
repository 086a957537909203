import { isLidUser, isPnUser, jidNormalizedUser, type Contact, type WAMessageKey } from '@whiskeysockets/baileys';
import type { LabelInfo, LabelUpdate } from '../contacts-types.js';
import { BoundedMap } from '../../domain/bounded-map.js';
import { ColdValue } from './cold-value.js';

/**
 * The auth store's key tables, as the book uses them. The gateway's AuthStore keeps any table it is
 * given (auth-state.ts stores tables by name, without knowing Baileys' types), so the account
 * state the gateway derives from WhatsApp's app state (labels, contact names) is saved in the
 * same snapshot as Baileys' app-state versions: after a crash the two can never disagree, and
 * Baileys, which only sends what changed since the version it saved, never leaves a label behind.
 */
interface Tables {
  get(type: string, ids: string[]): unknown;
  set(data: Record<string, Record<string, unknown>>): unknown;
}

/** How long changes to the book gather before they go to the auth state (see save). */
const SAVE_DELAY_MS = 250;

/** What the book keeps in its table, one entry each. */
type Part = 'labels' | 'names' | 'contacts';

/** The table the book lives in (Baileys' own tables never start with `gateway-`). */
const TABLE = 'gateway-account';

interface StoredLabel {
  name: string;
  color: number;
  deleted: boolean;
  chats: string[];
}

/** The last message of a chat, as Baileys' chat modifications (archive, unread, delete) name it. */
export interface LastMessage {
  key: WAMessageKey;
  messageTimestamp: number;
}

function isStoredLabels(value: unknown): value is Record<string, StoredLabel> {
  return typeof value === 'object' && value !== null && Object.values(value).every((l) => typeof l === 'object' && l !== null && Array.isArray((l as StoredLabel).chats));
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return typeof value === 'object' && value !== null && Object.values(value).every((v) => typeof v === 'string');
}

/** A part stored as JSON text (see AccountBook.stored); anything else that is not text: undefined. */
function parsed(value: unknown): unknown {
  if (typeof value !== 'string') return undefined;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return undefined;
  }
}

/** The names as stored: pairs in JSON text, or (before 2026-11) an object by JID. */
function storedNames(value: unknown): Array<[string, string]> {
  const pairs = parsed(value);
  if (Array.isArray(pairs)) return pairs.filter((p): p is [string, string] => Array.isArray(p) && p.length === 2 && typeof p[0] === 'string' && typeof p[1] === 'string');
  return isStringRecord(value) ? Object.entries(value) : [];
}

/** The contacts as stored: JIDs in JSON text, or (before 2026-11) an object with a key per JID. */
function storedContacts(value: unknown): string[] {
  const jids = parsed(value);
  if (Array.isArray(jids)) return jids.filter((j): j is string => typeof j === 'string');
  return isStringRecord(value) ? Object.keys(value) : [];
}

/** Names kept as their stored JSON text (pairs), parsed while in use. */
function coldNames(value: unknown): ColdValue<Map<string, string>> {
  const text = typeof value === 'string' ? value : JSON.stringify(storedNames(value));
  return new ColdValue(text, (t) => new Map(storedNames(t)), (m) => JSON.stringify([...m]));
}

/** Contacts kept as their stored JSON text (JIDs), parsed while in use. */
function coldContacts(value: unknown): ColdValue<Set<string>> {
  const text = typeof value === 'string' ? value : JSON.stringify(storedContacts(value));
  return new ColdValue(text, (t) => new Set(storedContacts(t)), (c) => JSON.stringify([...c]));
}

/**
 * What the account knows besides messages: its labels (business accounts) and the chats they are
 * on, the names of its contacts (address book and push names) and which numbers are contacts (the
 * default audience of a status post), and each chat's last message. Fed by Baileys' events,
 * saved in the auth state (see Tables).
 */
export class AccountBook {
  private labels = new Map<string, StoredLabel>();
  /** Name by normalised JID (phone JID or LID); JSON text while unused (cold-value.ts). */
  private names = coldNames('[]');
  /** Phone JIDs of the address book; JSON text while unused. */
  private contacts = coldContacts('[]');
  private readonly last = new BoundedMap<string, LastMessage>(5000);
  private tables: Tables | null = null;
  /** Parts changed since they were last handed to the auth state; see save(). */
  private unsaved = new Set<Part>();
  private saveTimer: NodeJS.Timeout | null = null;

  /** Reads what the auth state holds; called for each socket (the state outlives sockets). */
  async bind(keys: object): Promise<void> {
    // What the book changed must be in the tables before it is read back from them.
    this.flush();
    const tables = keys as Tables;
    this.tables = tables;
    const stored = (await tables.get(TABLE, ['labels', 'names', 'contacts'])) as Record<string, unknown>;
    this.labels = new Map(isStoredLabels(stored.labels) ? Object.entries(stored.labels) : []);
    this.names.cool();
    this.contacts.cool();
    this.names = coldNames(stored.names);
    this.contacts = coldContacts(stored.contacts);
  }

  /** A label edit or (dis)association from Baileys; returns the update to report, or null when nothing changed. */
  label(update: LabelUpdate): LabelUpdate | null {
    if (update.kind === 'label') {
      const prev = this.labels.get(update.labelId);
      if (prev && prev.name === update.name && prev.color === update.color && prev.deleted === update.deleted) return null;
      this.labels.set(update.labelId, { name: update.name, color: update.color, deleted: update.deleted, chats: prev?.chats ?? [] });
    } else {
      const label = this.labels.get(update.labelId) ?? { name: '', color: 0, deleted: false, chats: [] };
      const has = label.chats.includes(update.chatId);
      if (has === update.labeled) return null;
      label.chats = update.labeled ? [...label.chats, update.chatId] : label.chats.filter((c) => c !== update.chatId);
      this.labels.set(update.labelId, label);
    }
    this.save('labels');
    return update;
  }

  /** Labels that are not deleted, by id. */
  allLabels(): LabelInfo[] {
    return [...this.labels.entries()]
      .filter(([, l]) => !l.deleted && l.name !== '')
      .map(([id, l]) => ({ id, name: l.name, color: l.color, chats: [...l.chats] }))
      .sort((a, b) => Number(a.id) - Number(b.id) || a.id.localeCompare(b.id));
  }

  hasLabel(id: string): boolean {
    const l = this.labels.get(id);
    return l !== undefined && !l.deleted && l.name !== '';
  }

  /** Contacts from the address book (app state), history and push names. */
  contactsChanged(list: Array<Partial<Contact>>): void {
    // Most updates (a message's sender without a push name) change nothing: nothing to parse.
    if (!list.some((c) => c.id && (c.name !== undefined || c.notify || c.verifiedName))) return;
    const names = this.names.use();
    const contacts = this.contacts.use();
    let namesChanged = false;
    let contactsChanged = false;
    for (const c of list) {
      if (!c.id) continue;
      const id = jidNormalizedUser(c.id);
      const name = c.name ?? c.notify ?? c.verifiedName ?? undefined;
      const pn = isPnUser(id) ? id : c.phoneNumber && isPnUser(c.phoneNumber) ? jidNormalizedUser(c.phoneNumber) : null;
      const lid = isLidUser(id) ? id : c.lid && isLidUser(c.lid) ? jidNormalizedUser(c.lid) : null;
      for (const jid of [pn, lid]) {
        // An address-book name (`name`) wins over a push name the contact chose (`notify`).
        if (jid && name && names.get(jid) !== name && (c.name !== undefined || !names.has(jid))) {
          names.set(jid, name);
          namesChanged = true;
        }
      }
      if (pn && c.name !== undefined && !contacts.has(pn)) {
        contacts.add(pn);
        contactsChanged = true;
      }
    }
    if (namesChanged) {
      this.names.changed();
      this.save('names');
    }
    if (contactsChanged) {
      this.contacts.changed();
      this.save('contacts');
    }
  }

  nameOf(jid: string | null | undefined): string | undefined {
    return jid ? this.names.use().get(jidNormalizedUser(jid)) : undefined;
  }

  /** Phone JIDs of the address book. */
  addressBook(): string[] {
    return [...this.contacts.use()];
  }

  /** Remembers a chat's latest message (under the chat's id and its other address, when known). */
  message(key: WAMessageKey, seconds: number): void {
    if (!key.remoteJid || !key.id || seconds <= 0) return;
    const entry: LastMessage = { key: { remoteJid: key.remoteJid, id: key.id, fromMe: key.fromMe ?? false, ...(key.participant ? { participant: key.participant } : {}) }, messageTimestamp: seconds };
    for (const jid of [key.remoteJid, key.remoteJidAlt]) {
      if (!jid) continue;
      const id = jidNormalizedUser(jid);
      const prev = this.last.get(id);
      if (!prev || prev.messageTimestamp <= seconds) this.last.set(id, entry);
    }
  }

  lastMessage(chatId: string): LastMessage | undefined {
    return this.last.get(jidNormalizedUser(chatId));
  }

  /**
   * Hands the changed parts to the auth state a moment later (SAVE_DELAY_MS), once, however many
   * events changed them meanwhile. A first sync brings the address book as hundreds of contact
   * events, and every decrypted message may carry a push name: copying the whole book (and the
   * auth state comparing its JSON with the last copy) for each was quadratic, seconds of CPU when
   * many accounts pair at once. Nothing is lost by waiting: the auth state calls flush() before it
   * takes a snapshot (AuthStore.beforeSave), so the book is in the same snapshot as the app-state
   * versions it came with, and a shutdown flushes the auth state.
   */
  private save(part: Part): void {
    this.unsaved.add(part);
    if (this.saveTimer) return;
    this.saveTimer = setTimeout(() => this.flush(), SAVE_DELAY_MS);
    this.saveTimer.unref();
  }

  /** Hands what changed to the auth state now. */
  flush(): void {
    if (this.saveTimer) {
      clearTimeout(this.saveTimer);
      this.saveTimer = null;
    }
    if (this.unsaved.size === 0) return;
    const data: Record<string, unknown> = {};
    for (const part of this.unsaved) data[part] = this.stored(part);
    this.unsaved.clear();
    this.tables?.set({ [TABLE]: data });
  }

  /**
   * A part as the auth state stores it. Names and contacts (thousands of entries in a large
   * address book, saved every SAVE_DELAY_MS while a first sync runs) are JSON text: the auth state
   * serialises its tables with Baileys' replacer, a JavaScript call for every key of an object
   * but one for a string, and an object built from a Map is slow to build. 2,000 names and
   * contacts: 1.30 against 0.44 ms a save (median of 4 rounds of 200), 5 % more bytes (the quotes
   * escaped); the book's copies were 3.6 % and the table's JSON 2.8 % of the daemon's turns of
   * 100 ms or more while 300 phones paired (BENCH_SESSIONS_PROFILES).
   */
  private stored(part: Part): unknown {
    switch (part) {
      case 'labels':
        return Object.fromEntries(this.labels);
      case 'names':
        return this.names.text();
      case 'contacts':
        return this.contacts.text();
    }
  }
}
