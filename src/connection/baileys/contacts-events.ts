import type { BaileysEventMap } from '@whiskeysockets/baileys';
import type { Logger } from 'pino';
import type { LabelUpdate } from '../contacts-types.js';
import type { ConnectionHooks } from '../types.js';
import type { AccountBook } from './account-book.js';
import type { SocketLike } from './options.js';

/**
 * Feeds the account book from Baileys' events: labels and the chats they are on (app state, the
 * `regular` collection; also what this gateway changed, which Baileys emits as its own events),
 * and contact names (address book, history sync, push names). Label changes are reported through
 * `onLabel`, one by one in arrival order; a failing hook is logged, never thrown into Baileys.
 */
export function attachAccountEvents(sock: SocketLike, book: AccountBook, hooks: Pick<ConnectionHooks, 'onLabel'>, log: Logger): void {
  let tail: Promise<void> = Promise.resolve();
  const report = (update: LabelUpdate): void => {
    const changed = book.label(update);
    if (!changed || !hooks.onLabel) return;
    const onLabel = hooks.onLabel.bind(hooks);
    tail = tail.then(() => onLabel(changed)).catch((err: unknown) => log.error({ err, labelId: changed.labelId }, 'a label update was not stored'));
  };
  sock.ev.on('labels.edit', (label) => {
    report({ kind: 'label', labelId: String(label.id), name: label.name ?? '', color: label.color ?? 0, deleted: label.deleted === true });
  });
  sock.ev.on('labels.association', ({ type, association }) => {
    // Labels on single messages are not part of the gateway's API; chats are.
    if (association.type !== 'label_jid') return;
    report({ kind: 'association', labelId: String(association.labelId), chatId: association.chatId, labeled: type === 'add' });
  });
  sock.ev.on('contacts.upsert', (contacts) => book.contactsChanged(contacts));
  sock.ev.on('contacts.update', (contacts) => book.contactsChanged(contacts));
  takeHistorySets(sock.ev, ({ contacts }) => book.contactsChanged(contacts), log);
}

type HistorySet = BaileysEventMap['messaging-history.set'];

/**
 * Hands each history set (a chunk of the phone's history sync) to `onSet` as Baileys emits it, and
 * lets only its chats into Baileys' event buffer. The gateway keeps a set's contacts (their names);
 * the messages of the phone's past are not part of its history store.
 *
 * Why: while the buffer is on (a first login's initial sync), Baileys adds the key of every chat,
 * contact and message of a history set to a Set (`historyCache`, Utils/event-buffer.js) that lives
 * as long as the socket and is cleared only past 10,000 entries: 2,560 strings a session for a
 * realistic first sync (200 chats, 300 contacts, 2,000 messages), each marked again by every full
 * collection while the next accounts pair. The chats still go in: app-state chat updates of the
 * initial sync wait in the buffer for their chat's history entry ("conditional"), and without it
 * they would wait there for the socket's life. Baileys calls `emit` on the buffer object it was
 * built with (history after the initial sync too), so the property set here is what its own code
 * calls. Other events go through as before, with one difference: a live message whose key a history
 * set of the same buffer also held was folded into that set (and so never reported, as the gateway
 * reads only contacts there); it now comes out as `messages.upsert` like any live message. A failing
 * `onSet` is logged, never thrown into Baileys.
 */
export function takeHistorySets(ev: SocketLike['ev'], onSet: (set: HistorySet) => void, log: Logger): void {
  const emit = ev.emit.bind(ev);
  ev.emit = <T extends keyof BaileysEventMap>(event: T, data: BaileysEventMap[T]): boolean => {
    if (event !== 'messaging-history.set') return emit(event, data);
    const set = data as HistorySet;
    try {
      onSet(set);
    } catch (err) {
      log.error({ err }, 'the contacts of a history sync were not taken');
    }
    return set.chats.length > 0 ? emit('messaging-history.set', { ...set, contacts: [], messages: [] }) : true;
  };
}
