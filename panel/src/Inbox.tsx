import { useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import { api, clock, enc, errorText, every, liveEvents, newestOnly, when } from './api';

interface Handover {
  phone: string | null;
  chatId: string;
  fromName: string | null;
  node: string;
  openedAt: string;
  expiresAt?: string;
}
interface Message {
  messageId?: string;
  id?: string;
  fromMe: boolean;
  text?: string;
  caption?: string;
  timestamp?: string;
  type?: string;
  status?: string;
}

const who = (h: Handover): string => [h.fromName, h.phone].filter(Boolean).join(' ') || h.chatId;

/** Open handovers, newest first, kept current by the page's event stream. */
export function Inbox({ id }: { id: string }) {
  const [handovers, setHandovers] = useState<Handover[]>([]);
  const [loaded, setLoaded] = useState(false);
  const [chat, setChat] = useState<string | null>(null);
  const [messages, setMessages] = useState<Message[]>([]);
  const [reply, setReply] = useState('');
  const [sending, setSending] = useState(false);
  const [error, setError] = useState('');
  const [done, setDone] = useState('');
  const chatRef = useRef<string | null>(null);
  chatRef.current = chat;

  const newestList = useRef(newestOnly()).current;
  const newestChat = useRef(newestOnly()).current;
  const loadList = useCallback(
    async (background = false) => {
      const current = newestList();
      try {
        const r = await api<{ handovers: Handover[] }>('GET', `/api/${enc(id)}/handovers`, undefined, { background });
        if (!current()) return;
        setHandovers([...r.handovers].sort((a, b) => b.openedAt.localeCompare(a.openedAt)));
        setLoaded(true);
      } catch (err) {
        if (!background) setError(errorText(err));
      }
    },
    [id, newestList],
  );

  const loadChat = useCallback(
    async (chatId: string) => {
      const current = newestChat();
      try {
        const r = await api<{ messages: Message[] }>('GET', `/api/${enc(id)}/chats/${enc(chatId)}/messages?limit=50`);
        if (current() && chatRef.current === chatId) setMessages([...r.messages].reverse());
      } catch (err) {
        setError(errorText(err));
      }
    },
    [id, newestChat],
  );

  useEffect(() => {
    void loadList();
    // One stream for the page: new handovers, and messages of the open conversation.
    const close = liveEvents(id, ['conversation.handover', 'message.received'], (type, data) => {
      if (type === 'conversation.handover') void loadList();
      else {
        if (data.chatId === chatRef.current) void loadChat(String(data.chatId));
        // A message may end a timed-out handover; the list follows.
        void loadList(true);
      }
    });
    // Handovers also end by timeout or by a release elsewhere (no event): the list follows.
    const stop = every(15_000, () => void loadList(true));
    return () => {
      close();
      stop();
    };
  }, [id, loadList, loadChat]);

  useEffect(() => {
    setMessages([]);
    if (chat) void loadChat(chat);
  }, [chat, loadChat]);

  const open = handovers.find((h) => h.chatId === chat) ?? null;

  const send = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    if (!chat || !reply.trim()) return;
    setError('');
    setDone('');
    setSending(true);
    try {
      await api('POST', `/api/${enc(id)}/send`, { to: chat, message: reply });
      setReply('');
      await loadChat(chat);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setSending(false);
    }
  };

  const release = async (): Promise<void> => {
    if (!chat) return;
    setError('');
    try {
      await api('POST', `/api/${enc(id)}/handover/release`, { chatId: chat });
      setDone(`Released ${open ? who(open) : chat}: the bot answers this chat again.`);
      setChat(null);
      await loadList();
    } catch (err) {
      setError(errorText(err));
    }
  };

  return (
    <div className="inbox">
      <div className="card">
        <h2>Open handovers</h2>
        <ul className="list" aria-label="handovers">
          {handovers.map((h) => (
            <li key={h.chatId}>
              <button type="button" className={`handover${chat === h.chatId ? ' selected' : ''}`} aria-pressed={chat === h.chatId} onClick={() => setChat(h.chatId)}>
                <span className="handover-who">{who(h)}</span>
                <span className="muted"> since {when(h.openedAt)}</span>
              </button>
            </li>
          ))}
        </ul>
        {loaded && handovers.length === 0 && <p className="muted">No open handovers.</p>}
        {done && (
          <p className="ok" role="status">
            {done}
          </p>
        )}
      </div>
      {chat && (
        <div className="card conversation" aria-label="conversation panel">
          <h2>{open ? who(open) : chat}</h2>
          <p className="muted chat-id">
            {chat}
            {open?.expiresAt ? ` · goes back to the bot at ${when(open.expiresAt)} unless released earlier` : ''}
          </p>
          <ol className="messages" aria-label="conversation">
            {messages.map((m, i) => (
              <li key={m.messageId ?? m.id ?? i} className={m.fromMe ? 'out' : 'in'}>
                <span className="text">{m.text ?? m.caption ?? `[${m.type ?? 'message'}]`}</span>
                {m.timestamp && (
                  <span className="time">
                    {clock(m.timestamp)}
                    {m.fromMe && m.status ? ` · ${m.status}` : ''}
                  </span>
                )}
              </li>
            ))}
          </ol>
          <form className="reply" onSubmit={(e) => void send(e)}>
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
            <p className="muted">Sent as the instance (Ctrl+Enter sends); costs a credit unless the instance is premium.</p>
            <div className="row wrap">
              <button type="submit" disabled={sending}>
                Send
              </button>
              <button type="button" onClick={() => void release()}>
                Release to bot
              </button>
            </div>
          </form>
        </div>
      )}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
