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
  sock.ev.on('messaging-history.set', ({ contacts }) => book.contactsChanged(contacts));
}
