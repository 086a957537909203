import { useCallback, useEffect, useState } from 'react';
import { api, enc, errorText, type InstanceView, type Session } from './api';
import { Inbox } from './Inbox';
import { FlowBuilder } from './FlowBuilder';
import { Webhook } from './Webhook';
import { AuditLog } from './AuditLog';
import { Overview } from './Overview';

interface Props {
  id: string;
  tab: string;
  /** The chat opened in the inbox (its URL: #/i/ID/inbox/CHAT). */
  chat: string | null;
  session: Session;
  onSession: (s: Session) => void;
}

const TABS: [string, string][] = [
  ['overview', 'Overview'],
  ['inbox', 'Inbox'],
  ['flow', 'Chatbot'],
  ['webhook', 'Webhook'],
  ['audit', 'Audit log'],
];
/** An agent works in the inbox and reads the status; nothing else. */
const AGENT_TABS = new Set(['overview', 'inbox']);

export function InstancePage({ id, tab, chat, session, onSession }: Props) {
  const admin = session.role === 'admin';
  const agent = session.role === 'agent';
  // The admin view (name, sandbox, plan, webhook); an instance key cannot read it.
  const [view, setView] = useState<InstanceView | null>(null);
  const [viewError, setViewError] = useState('');
  const loadView = useCallback(async () => {
    if (!admin) return;
    try {
      setView(await api<InstanceView>('GET', `/api/instances/${enc(id)}`));
    } catch (err) {
      setViewError(errorText(err));
    }
  }, [admin, id]);
  useEffect(() => void loadView(), [loadView]);

  const name = view?.name ?? (session.role === 'instance' ? session.name : agent ? (session.instances.find((i) => i.instanceId === id)?.name ?? null) : null);
  const tabs = agent ? TABS.filter(([t]) => AGENT_TABS.has(t)) : TABS;
  const shown = tabs.some(([t]) => t === tab) ? tab : 'overview';

  return (
    <section>
      <h1 className="instance-title">
        {name ?? id}
        {name && <span className="muted"> {id}</span>}
        {view && <span className="muted"> · {view.sandbox ? 'sandbox' : 'WhatsApp'}</span>}
      </h1>
      <nav className="tabs" aria-label="instance">
        {admin && <a href="#/">All instances</a>}
        {agent && session.instances.length > 1 && <a href="#/">My instances</a>}
        {tabs.map(([t, label]) => (
          <a key={t} href={`#/i/${enc(id)}/${t}`} aria-current={shown === t ? 'page' : undefined}>
            {label}
          </a>
        ))}
      </nav>
      {viewError && (
        <p className="error" role="alert">
          {viewError}
        </p>
      )}
      {shown === 'inbox' ? (
        <Inbox id={id} chat={chat} session={session} />
      ) : shown === 'flow' ? (
        <FlowBuilder id={id} />
      ) : shown === 'webhook' ? (
        <Webhook id={id} />
      ) : shown === 'audit' ? (
        <AuditLog instanceId={id} />
      ) : (
        <Overview id={id} session={session} onSession={onSession} view={view} reloadView={loadView} />
      )}
    </section>
  );
}
