import { useCallback, useEffect, useRef, useState } from 'react';
import { api, enc } from './api';

export const isGroupChat = (chatId: string): boolean => chatId.endsWith('@g.us');

/**
 * The subjects of the instance's groups, for the inbox: the chat list keeps no group names (a
 * group's messages carry their senders' names), so they come from GET /groups, asked once per
 * group chat not yet named (it asks WhatsApp, and needs the connection: while it is down the
 * groups keep their fallback title), and from group.joined and group.updated events (`learn`).
 */
export function useGroupSubjects(id: string, chatIds: readonly string[]): { subjects: ReadonlyMap<string, string>; learn: (chatId: string, subject: string) => void } {
  const [subjects, setSubjects] = useState<ReadonlyMap<string, string>>(new Map());
  const asked = useRef(new Set<string>());

  const learn = useCallback((chatId: string, subject: string) => {
    setSubjects((s) => (s.get(chatId) === subject ? s : new Map(s).set(chatId, subject)));
  }, []);

  const unknown = chatIds.filter((c) => isGroupChat(c) && !subjects.has(c) && !asked.current.has(c));
  const key = unknown.join(',');
  useEffect(() => {
    if (key === '') return;
    for (const c of key.split(',')) asked.current.add(c);
    // Not cancelled when `key` changes (it does at once: the chats asked for leave it).
    api<{ groups: Array<{ chatId: string; subject: string }> }>('GET', `/api/${enc(id)}/groups`, undefined, { background: true }).then(
      (r) => {
        setSubjects((s) => {
          const next = new Map(s);
          for (const g of r.groups) if (!next.has(g.chatId)) next.set(g.chatId, g.subject);
          return next;
        });
      },
      () => undefined,
    );
  }, [id, key]);

  return { subjects, learn };
}
