import type { Static } from 'typebox';
import type { LabelUpdate } from '../connection/contacts-types.js';
import { phoneOfChat } from '../domain/phone.js';
import type { LabelUpdatedData } from '../schemas/events.js';

/** A label change as the `label.updated` event tells it, with the chat's phone when the chat is a phone chat. */
export function labelEvent(u: LabelUpdate): Static<typeof LabelUpdatedData> {
  if (u.kind === 'label') return { labelId: u.labelId, action: u.deleted ? 'deleted' : 'edited', name: u.name, color: u.color };
  return { labelId: u.labelId, action: u.labeled ? 'chat-added' : 'chat-removed', chatId: u.chatId, ...phoneOfChat(u.chatId) };
}
