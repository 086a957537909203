import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { api, enc, errorText, liveEvents } from './api';

interface Handover {
  phone: string;
  chatId: string;
  fromName: string | null;
  node: string;
  openedAt: string;
}
interface Message {
  messageId?: string;
  id?: string;
  fromMe: boolean;
  text?: string;
  timestamp?: string;
  type?: string;
}

export function Inbox({ id }: { id: string }) {
  const [handovers, setHandovers] = useState<Handover[]>([]);
  const [chat, setChat] = useState<string | null>(null);
  const [messages, setMessages] = useState<Message[]>([]);
  const [reply, setReply] = useState('');
  const [error, setError] = useState('');

  const loadList = useCallback(async () => {
    try {
      setHandovers((await api<{ handovers: Handover[] }>('GET', `/api/${enc(id)}/handovers`)).handovers);
    } catch (err) {
      setError(errorText(err));
    }
  }, [id]);

  const loadChat = useCallback(async (chatId: string) => {
    try {
      const r = await api<{ messages: Message[] }>('GET', `/api/${enc(id)}/chats/${enc(chatId)}/messages?limit=50`);
      setMessages([...r.messages].reverse());
    } catch (err) {
      setMessages([]);
      setError(errorText(err));
    }
  }, [id]);

  useEffect(() => {
    void loadList();
    return liveEvents(id, ['conversation.handover', 'message.received'], () => void loadList());
  }, [id, loadList]);
  useEffect(() => {
    if (!chat) return;
    void loadChat(chat);
    return liveEvents(id, ['message.received'], () => void loadChat(chat));
  }, [id, chat, loadChat]);

  const send = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    if (!chat || !reply.trim()) return;
    setError('');
    try {
      await api('POST', `/api/${enc(id)}/send`, { to: chat, message: reply });
      setReply('');
      await loadChat(chat);
    } catch (err) {
      setError(errorText(err));
    }
  };

  const release = async (): Promise<void> => {
    if (!chat) return;
    try {
      await api('POST', `/api/${enc(id)}/handover/release`, { chatId: chat });
      setChat(null);
      setMessages([]);
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
              <button type="button" className={chat === h.chatId ? 'selected' : ''} onClick={() => setChat(h.chatId)}>
                {h.fromName ? `${h.fromName} ` : ''}
                {h.phone}
                <span className="muted"> since {new Date(h.openedAt).toLocaleString()}</span>
              </button>
            </li>
          ))}
        </ul>
        {handovers.length === 0 && <p className="muted">No open handovers.</p>}
      </div>
      {chat && (
        <div className="card conversation">
          <h2>{chat}</h2>
          <ol className="messages" aria-label="conversation">
            {messages.map((m, i) => (
              <li key={m.messageId ?? m.id ?? i} className={m.fromMe ? 'out' : 'in'}>
                {m.text ?? `[${m.type ?? 'message'}]`}
              </li>
            ))}
          </ol>
          <form className="row" onSubmit={(e) => void send(e)}>
            <label className="grow">
              Reply
              <input name="reply" value={reply} onChange={(e) => setReply(e.target.value)} />
            </label>
            <button type="submit">Send</button>
          </form>
          <button type="button" onClick={() => void release()}>
            Release to bot
          </button>
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
