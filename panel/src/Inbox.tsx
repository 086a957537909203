import { useCallback, useEffect, useLayoutEffect, useRef, useState, type FormEvent } from 'react';
import { api, clock, enc, errorText, every, liveEvents, newestOnly, upload, when, type Session } from './api';
import type { Chat, Found, Handover, Message } from './inbox-types';
import { Body } from './MessageBody';
import { addCall, callFromEvent, mayRing, setCallState, useCalls, useRingClock, type CallSeen } from './calls';
import { CallLine, callerOf } from './CallLine';
import { isGroupChat, useGroupSubjects } from './groups';
import { settingsPath, type InstanceSettings } from './settings-api';
import { chatsWithCalls, senderOf } from './inbox-calls';

/** A chat's number: the digits of a phone chat, shown as +E.164. */
const numberOf = (chatId: string): string => (chatId.endsWith('@s.whatsapp.net') ? `+${chatId.split('@')[0]}` : isGroupChat(chatId) ? 'Group' : chatId.split('@')[0]!);
const claimer = (by: string): string => by.replace(/^operator:/, '').replace(/^secret$/, 'the admin').replace(/^instance:.*/, 'the instance key');
const chatUrl = (id: string, chatId: string): string => `#/i/${enc(id)}/inbox/${enc(chatId)}`;

/**
 * The inbox: every chat of the instance (newest first, unread counts, handovers and who claimed
 * them; groups by their subject, with who wrote each message), search by name, number and text,
 * and the open chat at its newest message with a reply box (text or a file), and the calls that
 * rang while the page was open (calls.ts) in their caller's chat. Each chat has its URL
 * (#/i/ID/inbox/CHAT). Kept current by one event stream and a slow poll (handovers also end by
 * timeout).
 */
export function Inbox({ id, chat, session }: { id: string; chat: string | null; session: Session }) {
  const [chats, setChats] = useState<Chat[]>([]);
  const [handovers, setHandovers] = useState<Map<string, Handover>>(new Map());
  const [loaded, setLoaded] = useState(false);
  const [query, setQuery] = useState('');
  const [found, setFound] = useState<Found | null>(null);
  const [messages, setMessages] = useState<Message[]>([]);
  const [older, setOlder] = useState<string | null>(null);
  const [reply, setReply] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [sending, setSending] = useState(false);
  const [error, setError] = useState('');
  const [done, setDone] = useState('');
  const chatRef = useRef<string | null>(chat);
  chatRef.current = chat;
  const agent = session.role === 'agent';
  // Read by the event stream, which a new session object (a rotated key) should not reopen.
  const settingsUrl = useRef(settingsPath(session, id));
  settingsUrl.current = settingsPath(session, id);
  const callList = useCalls(id);
  const now = useRingClock(callList);
  const { subjects, learn } = useGroupSubjects(
    id,
    chats.map((c) => c.chatId),
  );
  // What the opening of a chat reads at that moment, without reopening it when they change.
  const known = useRef({ loaded: false, chats: new Set<string>(), calls: callList });
  known.current = { loaded, chats: new Set(chats.map((c) => c.chatId)), calls: callList };
  const fileInput = useRef<HTMLInputElement>(null);
  const scroller = useRef<HTMLOListElement>(null);
  const stickToEnd = useRef(true);
  const replyForm = useRef<HTMLFormElement>(null);
  /** The chat whose first page was shown: the page itself is scrolled to it once, on opening. */
  const shownChat = useRef<string | null>(null);

  const newestList = useRef(newestOnly()).current;
  const newestChat = useRef(newestOnly()).current;
  const loadList = useCallback(
    async (background = false) => {
      const current = newestList();
      try {
        const [c, h] = await Promise.all([
          api<{ chats: Chat[] }>('GET', `/api/${enc(id)}/chats`, undefined, { background }),
          api<{ handovers: Handover[] }>('GET', `/api/${enc(id)}/handovers`, undefined, { background }),
        ]);
        if (!current()) return;
        setChats(c.chats);
        setHandovers(new Map(h.handovers.map((x) => [x.chatId, x])));
        setLoaded(true);
      } catch (err) {
        if (!background) setError(errorText(err));
      }
    },
    [id, newestList],
  );

  const loadChat = useCallback(
    async (chatId: string, keepScroll = false) => {
      const current = newestChat();
      try {
        const r = await api<{ messages: Message[]; nextBefore: string | null }>('GET', `/api/${enc(id)}/chats/${enc(chatId)}/messages?limit=50`);
        if (!current() || chatRef.current !== chatId) return;
        const el = scroller.current;
        stickToEnd.current = !keepScroll || !el || el.scrollHeight - el.scrollTop - el.clientHeight < 40;
        setMessages([...r.messages].reverse());
        setOlder(r.nextBefore);
      } catch (err) {
        if (chatRef.current === chatId) {
          setMessages([]);
          // A chat known only by its URL, with nothing kept yet: not an error.
          if (!(err instanceof Error && /no messages kept/.test(err.message))) setError(errorText(err));
        }
      }
    },
    [id, newestChat],
  );

  const loadOlder = async (): Promise<void> => {
    if (!chat || !older) return;
    try {
      const r = await api<{ messages: Message[]; nextBefore: string | null }>('GET', `/api/${enc(id)}/chats/${enc(chat)}/messages?limit=50&before=${enc(older)}`);
      stickToEnd.current = false;
      setMessages((ms) => [...[...r.messages].reverse(), ...ms]);
      setOlder(r.nextBefore);
    } catch (err) {
      setError(errorText(err));
    }
  };

  useEffect(() => {
    void loadList();
    // One stream for the page: new messages, their statuses, new handovers, calls, group names.
    const close = liveEvents(id, ['message.received', 'message.status', 'conversation.handover', 'call.received', 'group.joined', 'group.updated'], (type, data) => {
      if (type === 'group.joined' || type === 'group.updated') {
        if (typeof data.chatId === 'string' && typeof data.subject === 'string') learn(data.chatId, data.subject);
        return;
      }
      if (type === 'call.received') {
        const call = callFromEvent(data, Date.now());
        if (!call) return;
        addCall(id, call);
        setDone(`Incoming ${call.isVideo ? 'video' : 'voice'} call from ${callerOf(call)}.`);
        // Rejected by the gateway itself when the instance's settings say so (agents cannot read them).
        if (!agent) {
          void api<InstanceSettings>('GET', settingsUrl.current, undefined, { background: true })
            .then((s) => s.calls.autoReject && setCallState(id, call.callId, 'auto-rejected'))
            .catch(() => undefined);
        }
        return;
      }
      const open = data.chatId === chatRef.current;
      if (open && type !== 'conversation.handover') void loadChat(String(data.chatId), true);
      // A message that arrives in the open chat is read there and then.
      if (open && type === 'message.received') void api('POST', `/api/${enc(id)}/read`, { chatId: String(data.chatId) }, { background: true }).catch(() => undefined).then(() => loadList(true));
      else void loadList(true);
    });
    // Handovers also end by timeout or by a release elsewhere (no event): the list follows.
    const stop = every(15_000, () => void loadList(true));
    return () => {
      close();
      stop();
    };
  }, [id, loadList, loadChat, learn, agent]);

  // Opening a chat: its newest messages, scrolled to the end; it counts as read.
  useEffect(() => {
    setMessages([]);
    setOlder(null);
    setError('');
    setDone('');
    if (!chat) return;
    stickToEnd.current = true;
    // Known only from a call: the gateway keeps nothing of it yet (its first message reloads it).
    const k = known.current;
    if (k.loaded && !k.chats.has(chat) && k.calls.some((c) => c.chatId === chat)) return;
    void loadChat(chat);
    void api('POST', `/api/${enc(id)}/read`, { chatId: chat })
      .then(() => loadList(true))
      .catch(() => undefined);
  }, [chat, id, loadChat, loadList]);

  useLayoutEffect(() => {
    const el = scroller.current;
    if (el && stickToEnd.current) el.scrollTop = el.scrollHeight;
    // Opening a chat on a small screen: the page scrolls down to its newest message and the reply box.
    if (chat && messages.length > 0 && shownChat.current !== chat) {
      shownChat.current = chat;
      const form = replyForm.current;
      if (form && form.getBoundingClientRect().bottom > window.innerHeight) form.scrollIntoView({ block: 'end' });
    }
  }, [messages, chat, callList]);

  // Search: names and numbers here, message texts on the server.
  useEffect(() => {
    const q = query.trim();
    if (q.length < 2) {
      setFound(null);
      return;
    }
    // An answer to a query typed over since is dropped: answers may come back out of order, and a
    // late one for "0003333" once replaced the results for "blue mug" (CI, browser-round2).
    let current = true;
    const timer = setTimeout(() => {
      api<Found>('GET', `/api/${enc(id)}/search?q=${enc(q)}&limit=30`).then(
        (r) => current && setFound(r),
        (err: unknown) => current && setError(errorText(err)),
      );
    }, 250);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [query, id]);

  const titleOf = (c: { chatId: string; name?: string | undefined }): string => (isGroupChat(c.chatId) ? (subjects.get(c.chatId) ?? c.name ?? 'Group chat') : (c.name ?? numberOf(c.chatId)));
  const { shown: shownChats, lastCall, lastAt } = chatsWithCalls(chats, callList);
  const q = query.trim().toLowerCase();
  const digits = q.replace(/[\s()+-]/g, '');
  const listed = q ? shownChats.filter((c) => titleOf(c).toLowerCase().includes(q) || (/^\d+$/.test(digits) && c.chatId.includes(digits))) : shownChats;
  const open = chat ? (shownChats.find((c) => c.chatId === chat) ?? null) : null;
  const group = chat !== null && isGroupChat(chat);
  // The conversation: messages and the calls of this chat, in time order.
  type Line = { at: number; m: Message; c?: undefined } | { at: number; c: CallSeen; m?: undefined };
  const timeline: Line[] = [...messages.map((m): Line => ({ at: Date.parse(m.timestamp), m })), ...callList.filter((c) => c.chatId === chat).map((c): Line => ({ at: Date.parse(c.timestamp), c }))].sort((a, b) => a.at - b.at);
  const handover = chat ? handovers.get(chat) : undefined;
  const me = session.operator ? `operator:${session.operator}` : session.role === 'admin' ? 'secret' : `instance:${session.instanceId ?? ''}`;

  const send = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    if (!chat || (!reply.trim() && !file)) return;
    setError('');
    setDone('');
    setSending(true);
    try {
      if (file) {
        const form = new FormData();
        form.set('to', chat);
        if (reply.trim()) form.set('caption', reply);
        form.set('file', file, file.name);
        await upload(`/api/${enc(id)}/send-media`, form);
        setFile(null);
        if (fileInput.current) fileInput.current.value = '';
      } else await api('POST', `/api/${enc(id)}/send`, { to: chat, message: reply });
      setReply('');
      stickToEnd.current = true;
      await loadChat(chat);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setSending(false);
    }
  };

  const claim = async (yes: boolean): Promise<void> => {
    if (!chat) return;
    setError('');
    try {
      await api('POST', `/api/${enc(id)}/handover/claim`, { chatId: chat, claim: yes });
      setDone(yes ? 'Claimed: you answer this chat; the bot stays quiet.' : 'Let go: anyone may claim this chat.');
      await loadList();
    } catch (err) {
      setError(errorText(err));
    }
  };

  const release = async (): Promise<void> => {
    if (!chat) return;
    setError('');
    try {
      await api('POST', `/api/${enc(id)}/handover/release`, { chatId: chat });
      setDone(`Released ${open ? titleOf(open) : numberOf(chat)}: the bot answers this chat again.`);
      await loadList();
    } catch (err) {
      setError(errorText(err));
    }
  };

  return (
    <div className={`inbox${chat ? ' has-chat' : ''}`}>
      <div className="card chat-list">
        <h2>Chats</h2>
        <label>
          Search
          <input type="search" name="q" value={query} onChange={(e) => setQuery(e.target.value)} placeholder="name, number or words" />
        </label>
        <ul className="list" aria-label="chats">
          {listed.map((c) => {
            const h = handovers.get(c.chatId);
            return (
              <li key={c.chatId}>
                <a href={chatUrl(id, c.chatId)} className={`chat${chat === c.chatId ? ' selected' : ''}`} aria-current={chat === c.chatId ? 'true' : undefined} data-chat={c.chatId}>
                  <span className="chat-top">
                    <span className="chat-who">{titleOf(c)}</span>
                    {isGroupChat(c.chatId) && <span className="badge">Group</span>}
                    {c.unread > 0 && (
                      <span className="unread" data-testid="unread" aria-label={`${c.unread} unread`}>
                        {c.unread}
                      </span>
                    )}
                  </span>
                  <span className="chat-meta muted">
                    {c.name && !isGroupChat(c.chatId) ? `${numberOf(c.chatId)} · ` : ''}
                    {clock(lastAt(c))}
                    {lastCall.has(c.chatId) && mayRing(lastCall.get(c.chatId)!, now) ? ' · incoming call' : ''}
                    {h ? (h.claimedBy ? ` · claimed by ${claimer(h.claimedBy)}` : ' · waiting for a person') : ''}
                  </span>
                </a>
              </li>
            );
          })}
        </ul>
        {loaded && shownChats.length === 0 && <p className="muted">No chats yet: messages in and out appear here, and calls while this page is open.</p>}
        {loaded && shownChats.length > 0 && listed.length === 0 && !found?.messages.length && <p className="muted">No chat matches.</p>}
        {found && found.messages.length > 0 && (
          <>
            <h3>Messages</h3>
            <ul className="list" aria-label="messages found">
              {found.messages.map((m) => (
                <li key={m.messageId}>
                  <a href={chatUrl(id, m.chatId)} className="chat">
                    <span className="chat-who">{titleOf({ chatId: m.chatId, name: chats.find((c) => c.chatId === m.chatId)?.name })}</span>
                    <span className="chat-meta muted">
                      {m.fromMe ? 'You: ' : ''}
                      {(m.text ?? m.caption ?? '').slice(0, 80)}
                    </span>
                  </a>
                </li>
              ))}
            </ul>
          </>
        )}
      </div>
      {chat && (
        <div className="card conversation" aria-label="conversation panel">
          <a href={`#/i/${enc(id)}/inbox`} className="back">
            ← All chats
          </a>
          <h2>
            {open ? titleOf(open) : titleOf({ chatId: chat })}
            {group && <span className="badge">Group</span>}
          </h2>
          <p className="muted chat-id">
            {chat}
            {handover && ` · with a person until ${when(handover.expiresAt)} unless released`}
          </p>
          <div className="row wrap chat-actions">
            {handover?.claimedBy && (
              <span className="claimed" data-testid="claimed-by">
                Claimed by {handover.claimedBy === me ? 'you' : claimer(handover.claimedBy)}
              </span>
            )}
            {handover?.claimedBy === me ? (
              <button type="button" onClick={() => void claim(false)}>
                Let go
              </button>
            ) : (
              <button type="button" onClick={() => void claim(true)}>
                {handover?.claimedBy ? 'Take over' : 'Claim'}
              </button>
            )}
            {handover && (
              <button type="button" onClick={() => void release()}>
                Release to bot
              </button>
            )}
          </div>
          {older && (
            <button type="button" className="small" onClick={() => void loadOlder()}>
              Show older messages
            </button>
          )}
          <ol className="messages" aria-label="conversation" ref={scroller} tabIndex={0}>
            {timeline.map(({ m, c }) =>
              c ? (
                <CallLine key={c.callId} id={id} call={c} now={now} canReject={!agent} onSaid={(ok, text) => (ok ? (setError(''), setDone(text)) : setError(text))} />
              ) : (
              <li key={m.messageId} className={m.fromMe ? 'out' : 'in'} data-message={m.messageId}>
                {group && !m.fromMe && <span className="sender">{senderOf(m)}</span>}
                <Body m={m} />
                <span className="time">
                  {clock(m.timestamp)}
                  {m.fromMe && m.status ? ` · ${m.status}` : ''}
                </span>
              </li>
              ),
            )}
          </ol>
          <form className="reply" onSubmit={(e) => void send(e)} ref={replyForm}>
            <label className="grow">
              Reply
              <textarea
                name="reply"
                rows={2}
                value={reply}
                onChange={(e) => setReply(e.target.value)}
                onKeyDown={(e) => {
                  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void send(e);
                }}
              />
            </label>
            <div className="row wrap">
              <label>
                Attach a file
                <input ref={fileInput} type="file" name="file" onChange={(e) => setFile(e.target.files?.[0] ?? null)} />
              </label>
              <button type="submit" disabled={sending}>
                Send
              </button>
            </div>
            <p className="muted">Sent as the instance (Ctrl+Enter sends; with a file, the text is its caption); each message costs a credit unless the instance is premium.</p>
          </form>
        </div>
      )}
      <p className={`said ${error ? 'error' : done ? 'ok' : ''}`} role={error ? 'alert' : 'status'}>
        {error || done}
      </p>
    </div>
  );
}
