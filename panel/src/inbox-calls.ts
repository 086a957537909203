import type { CallSeen } from './calls';
import type { Chat, Message } from './inbox-types';

/** Who wrote a message in a group: their name and phone, as much as is known. */
export function senderOf(m: Message): string {
  const phone = m.from ?? (m.sender ? m.sender.split('@')[0]! : '');
  return m.fromName ? (phone ? `${m.fromName} · ${phone}` : m.fromName) : phone || 'someone';
}

const latest = (a: string, b: string): string => (Date.parse(a) >= Date.parse(b) ? a : b);

/**
 * The chat list with the calls the page saw: a chat that rang comes up the list (a call counts as
 * activity), and a caller who never wrote gets a chat of their own (listed, with nothing kept on
 * the server to load). `lastCall` is each chat's newest call; `lastAt` its newest activity.
 */
export function chatsWithCalls(chats: Chat[], calls: readonly CallSeen[]): { shown: Chat[]; lastCall: ReadonlyMap<string, CallSeen>; lastAt: (c: Chat) => string } {
  const lastCall = new Map<string, CallSeen>();
  for (const c of calls) lastCall.set(c.chatId, c);
  const lastAt = (c: Chat): string => {
    const call = lastCall.get(c.chatId);
    return call ? latest(c.lastMessageAt, call.timestamp) : c.lastMessageAt;
  };
  if (calls.length === 0) return { shown: chats, lastCall, lastAt };
  const known = new Set(chats.map((c) => c.chatId));
  const onlyCalled = [...lastCall.values()].filter((c) => !known.has(c.chatId)).map((c): Chat => ({ chatId: c.chatId, isGroup: c.isGroup, lastMessageAt: c.timestamp, unread: 0, handover: false }));
  const shown = [...chats, ...onlyCalled].sort((a, b) => Date.parse(lastAt(b)) - Date.parse(lastAt(a)));
  return { shown, lastCall, lastAt };
}
