import { useCallback, useEffect, useState } from 'react';
import { api, enc, errorText, liveEvents, type InstanceView, type Session } from './api';
import { KeyOnce } from './KeyOnce';
import { Inbox } from './Inbox';
import { FlowBuilder } from './FlowBuilder';
import { Webhook } from './Webhook';

interface Props {
  id: string;
  tab: string;
  session: Session;
  onSession: (s: Session) => void;
}

const TABS: [string, string][] = [
  ['overview', 'Overview'],
  ['inbox', 'Inbox'],
  ['flow', 'Chatbot'],
  ['webhook', 'Webhook'],
];

export function InstancePage({ id, tab, session, onSession }: Props) {
  return (
    <section>
      <nav className="tabs" aria-label="instance">
        {TABS.map(([t, label]) => (
          <a key={t} href={`#/i/${enc(id)}/${t}`} aria-current={tab === t ? 'page' : undefined}>
            {label}
          </a>
        ))}
      </nav>
      {tab === 'inbox' ? <Inbox id={id} /> : tab === 'flow' ? <FlowBuilder id={id} /> : tab === 'webhook' ? <Webhook id={id} admin={session.role === 'admin'} /> : <Overview id={id} session={session} onSession={onSession} />}
    </section>
  );
}

function Overview({ id, session, onSession }: { id: string; session: Session; onSession: (s: Session) => void }) {
  const admin = session.role === 'admin';
  const [status, setStatus] = useState<string>('');
  const [qr, setQr] = useState<string | null>(null);
  const [view, setView] = useState<InstanceView | null>(null);
  const [newKey, setNewKey] = useState<string | null>(null);
  const [error, setError] = useState('');
  const [phone, setPhone] = useState('');
  const [code, setCode] = useState('');
  const [addCredits, setAddCredits] = useState('100');
  const [days, setDays] = useState('30');

  const loadQr = useCallback(async () => {
    try {
      const r = await api<{ qrImage: string }>('GET', `/api/${enc(id)}/qr-code`);
      setQr(r.qrImage);
    } catch {
      setQr(null);
    }
  }, [id]);

  const load = useCallback(async () => {
    try {
      const s = await api<{ status: string }>('GET', `/api/${enc(id)}/status`);
      setStatus(s.status);
      if (s.status === 'qr_code_generated') await loadQr();
      if (admin) setView(await api<InstanceView>('GET', `/api/instances/${enc(id)}`));
    } catch (err) {
      setError(errorText(err));
    }
  }, [id, admin, loadQr]);

  useEffect(() => {
    void load();
    return liveEvents(id, ['instance.status', 'qr.updated'], (type, data) => {
      if (type === 'instance.status') {
        const to = String(data.to);
        setStatus(to);
        if (to !== 'qr_code_generated') setQr(null);
        else void loadQr();
      } else void loadQr();
    });
  }, [id, load, loadQr]);

  const act = async (f: () => Promise<unknown>): Promise<void> => {
    setError('');
    try {
      await f();
    } catch (err) {
      setError(errorText(err));
    }
  };

  const rotate = () =>
    act(async () => {
      if (admin) {
        const r = await api<{ apiKey: string }>('POST', `/api/instances/${enc(id)}/rotate-key`);
        setNewKey(r.apiKey);
      } else {
        const r = await api<{ apiKey: string }>('POST', `/api/${enc(id)}/rotate-key`);
        setNewKey(r.apiKey);
        // The session was opened with the old key and ended with it: sign in again with the new one.
        onSession(await api<Session>('POST', '/panel/api/session', { instanceId: id, apiKey: r.apiKey }));
      }
    });

  return (
    <div className="grid">
      <div className="card">
        <h2>Connection</h2>
        <p>
          Status:{' '}
          <strong className={`status s-${status}`} data-testid="instance-status">
            {status || '…'}
          </strong>
        </p>
        {qr && status === 'qr_code_generated' && <img className="qr" src={qr} alt="Pairing QR code: scan it with WhatsApp" width={264} height={264} />}
        {status === 'connected' && <p className="ok">Connected</p>}
        {status !== 'connected' && (
          <form
            className="row wrap"
            onSubmit={(e) => {
              e.preventDefault();
              void act(async () => setCode((await api<{ code: string }>('POST', `/api/${enc(id)}/pairing-code`, { phone })).code));
            }}
          >
            <label>
              Pair by code: phone
              <input value={phone} onChange={(e) => setPhone(e.target.value)} placeholder="+15551234567" />
            </label>
            <button type="submit">Get code</button>
            {code && <code>{code}</code>}
          </form>
        )}
        <div className="row wrap">
          <button type="button" onClick={() => void act(() => api('POST', `/api/${enc(id)}/restart`).then(load))}>
            Reconnect
          </button>
          <button type="button" onClick={() => void act(() => api('POST', `/api/${enc(id)}/logout`).then(load))}>
            Log out device
          </button>
        </div>
      </div>
      <div className="card">
        <h2>API key</h2>
        <p className="muted">Rotating stops the old key at once.</p>
        <button type="button" onClick={() => void rotate()}>
          Rotate key
        </button>
        {newKey && <KeyOnce label="New API key" value={newKey} onDone={() => setNewKey(null)} />}
      </div>
      {admin && view && (
        <div className="card" aria-label="plan">
          <h2>Plan</h2>
          <dl>
            <dt>Premium</dt>
            <dd data-testid="premium">{view.premium ? `yes, until ${view.premiumUntil ?? '?'}` : 'no'}</dd>
            <dt>Credits</dt>
            <dd data-testid="credits">{String(view.credits ?? '')}</dd>
            <dt>Quota remaining</dt>
            <dd>{String(view.quotaRemaining)}</dd>
          </dl>
          <form className="row wrap" onSubmit={(e) => (e.preventDefault(), void act(() => api('POST', `/api/instances/${enc(id)}/credits`, { add: Number(addCredits) }).then(load)))}>
            <label>
              Add credits
              <input type="number" min={1} value={addCredits} onChange={(e) => setAddCredits(e.target.value)} />
            </label>
            <button type="submit">Add</button>
          </form>
          <form className="row wrap" onSubmit={(e) => (e.preventDefault(), void act(() => api('POST', `/api/instances/${enc(id)}/premium`, { days: Number(days) }).then(load)))}>
            <label>
              Premium days
              <input type="number" min={1} value={days} onChange={(e) => setDays(e.target.value)} />
            </label>
            <button type="submit">Extend</button>
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
