import { isE164, phoneDigits } from '../domain/phone.js';
import type { GatewayEvent } from '../events/types.js';
import type { WebhookFilters } from '../schemas/instance.js';

/** `filters` of `PUT /webhook`, as the schema let it through. */
export interface FiltersInput {
  ignoreGroups?: boolean | undefined;
  onlyChats?: readonly string[] | null | undefined;
  ignoreChats?: readonly string[] | undefined;
}

const GROUP_SUFFIX = '@g.us';

/** A phone's chat id: "+15551234567" -> "15551234567@s.whatsapp.net"; chat ids pass as they are. */
function chatKey(entry: string): string {
  return isE164(entry) ? `${phoneDigits(entry)}@s.whatsapp.net` : entry;
}

function chatList(entries: readonly string[]): string[] {
  return [...new Set(entries.map(chatKey))];
}

/**
 * The filters to store: phones become their JIDs, repeats go, and filters that leave everything
 * through are not stored at all (undefined), so an unfiltered webhook costs nothing per event.
 */
export function normaliseFilters(input: FiltersInput | null): WebhookFilters | undefined {
  if (!input) return undefined;
  const filters: WebhookFilters = {
    ignoreGroups: input.ignoreGroups === true,
    onlyChats: input.onlyChats ? chatList(input.onlyChats) : null,
    ignoreChats: input.ignoreChats ? chatList(input.ignoreChats) : [],
  };
  const open = !filters.ignoreGroups && filters.onlyChats === null && filters.ignoreChats.length === 0;
  return open ? undefined : filters;
}

/** How the API shows filters (the unfiltered defaults when none are stored). */
export function filtersView(filters: WebhookFilters | undefined): WebhookFilters {
  return filters ?? { ignoreGroups: false, onlyChats: null, ignoreChats: [] };
}

/**
 * The ids under which an event's chat may be named: its `chatId`, and for a one-to-one chat also
 * the phone JID of the `phone` the event carries (a `message.status` whose chat WhatsApp addressed
 * by LID still matches a filter written with the number). None for an event about no chat
 * (`instance.status`, `qr.updated`, `webhook.test`, a label edited or deleted).
 */
export function eventChats(event: GatewayEvent): string[] {
  const data = event.data as { chatId?: unknown; phone?: unknown };
  if (typeof data.chatId !== 'string') return [];
  const keys = [data.chatId];
  if (!data.chatId.endsWith(GROUP_SUFFIX) && isE164(data.phone)) {
    const byPhone = chatKey(data.phone);
    if (byPhone !== data.chatId) keys.push(byPhone);
  }
  return keys;
}

interface Compiled {
  only: Set<string> | null;
  ignore: Set<string>;
}

/** Sets built once per stored filters object (a new PUT stores a new object). */
const compiledFilters = new WeakMap<WebhookFilters, Compiled>();

function compile(filters: WebhookFilters): Compiled {
  let c = compiledFilters.get(filters);
  if (!c) {
    c = { only: filters.onlyChats ? new Set(filters.onlyChats) : null, ignore: new Set(filters.ignoreChats) };
    compiledFilters.set(filters, c);
  }
  return c;
}

/**
 * Whether the webhook takes this event. An event about no chat always passes; one about a chat
 * is left out when it is a group and `ignoreGroups` is on, when `ignoreChats` names the chat, or
 * when `onlyChats` is set and does not name it (exclusions win over `onlyChats`).
 */
export function admits(filters: WebhookFilters | undefined, event: GatewayEvent): boolean {
  if (!filters) return true;
  const chats = eventChats(event);
  if (chats.length === 0) return true;
  if (filters.ignoreGroups && chats[0]!.endsWith(GROUP_SUFFIX)) return false;
  const c = compile(filters);
  if (chats.some((k) => c.ignore.has(k))) return false;
  return c.only === null || chats.some((k) => c.only!.has(k));
}
