import { useCallback, useEffect, useRef, useState } from 'react';
import { api, enc, errorText, liveEvents, sessionChanging, when, type InstanceView, type Session } from './api';
import { KeyOnce } from './KeyOnce';
import { ConfirmButton } from './Confirm';
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
  const admin = session.role === 'admin';
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

  return (
    <section>
      <h1 className="instance-title">
        {view?.name ?? id}
        {view?.name && <span className="muted"> {id}</span>}
        {view && <span className="muted"> · {view.sandbox ? 'sandbox' : 'WhatsApp'}</span>}
      </h1>
      <nav className="tabs" aria-label="instance">
        {admin && <a href="#/">All instances</a>}
        {TABS.map(([t, label]) => (
          <a key={t} href={`#/i/${enc(id)}/${t}`} aria-current={tab === t ? 'page' : undefined}>
            {label}
          </a>
        ))}
      </nav>
      {viewError && (
        <p className="error" role="alert">
          {viewError}
        </p>
      )}
      {tab === 'inbox' ? (
        <Inbox id={id} />
      ) : tab === 'flow' ? (
        <FlowBuilder id={id} />
      ) : tab === 'webhook' ? (
        <Webhook id={id} />
      ) : (
        <Overview id={id} session={session} onSession={onSession} view={view} reloadView={loadView} />
      )}
    </section>
  );
}

interface OverviewProps {
  id: string;
  session: Session;
  onSession: (s: Session) => void;
  view: InstanceView | null;
  reloadView: () => Promise<void>;
}

function Overview({ id, session, onSession, view, reloadView }: OverviewProps) {
  const admin = session.role === 'admin';
  const [status, setStatus] = useState<string>('');
  const [plan, setPlan] = useState<{ premium: boolean; premiumUntil: string | null; quotaRemaining: string | number } | null>(null);
  const [qr, setQr] = useState<string | null>(null);
  const [newKey, setNewKey] = useState<string | null>(null);
  // What an action said, shown in the card it was done in.
  type Card = 'connection' | 'key' | 'plan';
  const [said, setSaid] = useState<{ card: Card; ok: boolean; text: string } | null>(null);
  const [phone, setPhone] = useState('');
  const [code, setCode] = useState('');
  const [addCredits, setAddCredits] = useState('100');
  const [days, setDays] = useState('30');

  // Answers can overtake each other and the event stream: only the newest QR request is drawn,
  // and a status read before the last live event is older than what that event said.
  const qrSeq = useRef(0);
  const lastEventAt = useRef(0);
  const loadQr = useCallback(async () => {
    const seq = ++qrSeq.current;
    try {
      const r = await api<{ qrImage: string }>('GET', `/api/${enc(id)}/qr-code`);
      if (seq === qrSeq.current) setQr(r.qrImage);
    } catch {
      if (seq === qrSeq.current) setQr(null);
    }
  }, [id]);

  const load = useCallback(async () => {
    try {
      const sentAt = performance.now();
      const s = await api<{ status: string; premium: boolean; premiumUntil: string | null; quotaRemaining: string | number }>('GET', `/api/${enc(id)}/status`);
      setPlan(s);
      if (lastEventAt.current > sentAt) return;
      setStatus(s.status);
      if (s.status === 'qr_code_generated') await loadQr();
    } catch (err) {
      setSaid({ card: 'connection', ok: false, text: errorText(err) });
    }
  }, [id, loadQr]);

  useEffect(() => {
    void load();
    // One stream for the page: status changes and each new QR, drawn as they come.
    return liveEvents(id, ['instance.status', 'qr.updated'], (type, data) => {
      lastEventAt.current = performance.now();
      if (type === 'instance.status') {
        const to = String(data.to);
        setStatus(to);
        if (to === 'connected') setCode('');
        if (to !== 'qr_code_generated') setQr(null);
        else void loadQr();
      } else void loadQr();
    });
  }, [id, load, loadQr]);

  const act = async (card: Card, what: string, f: () => Promise<unknown>): Promise<void> => {
    setSaid(null);
    try {
      await f();
      if (what) setSaid({ card, ok: true, text: what });
    } catch (err) {
      setSaid({ card, ok: false, text: errorText(err) });
    }
  };
  const saidIn = (card: Card) =>
    said?.card === card ? (
      <p className={said.ok ? 'ok' : 'error'} role={said.ok ? 'status' : 'alert'}>
        {said.text}
      </p>
    ) : null;

  const rotate = () =>
    act('key', 'Key rotated: the old key is refused from now on.', async () => {
      if (admin) {
        const r = await api<{ apiKey: string }>('POST', `/api/instances/${enc(id)}/rotate-key`);
        setNewKey(r.apiKey);
      } else {
        // This session was opened with the old key and ends with it: sign in again with the new one.
        const next = await sessionChanging(
          (async () => {
            const r = await api<{ apiKey: string }>('POST', `/api/${enc(id)}/rotate-key`);
            setNewKey(r.apiKey);
            return api<Session>('POST', '/panel/api/session', { instanceId: id, apiKey: r.apiKey });
          })(),
        );
        onSession(next);
      }
    });

  const planWrite = (what: string, path: string, body: unknown) =>
    act('plan', what, async () => {
      await api('POST', path, body);
      await Promise.all([reloadView(), load()]);
    });

  return (
    <div className="grid">
      <div className="card">
        <h2>Connection</h2>
        <p>
          Status:{' '}
          <strong className={`status s-${status}`} data-testid="instance-status" aria-live="polite">
            {status || '…'}
          </strong>
        </p>
        {qr && status === 'qr_code_generated' && (
          <>
            <p className="muted">On the phone: WhatsApp › Linked devices › Link a device, then scan.</p>
            <img className="qr" src={qr} alt="Pairing QR code: scan it with WhatsApp" width={264} height={264} data-testid="qr" />
          </>
        )}
        {status === 'connected' && <p className="ok">Connected</p>}
        {status !== 'connected' && (
          <form
            className="pair-code"
            onSubmit={(e) => {
              e.preventDefault();
              void act('connection', '', async () => setCode((await api<{ code: string }>('POST', `/api/${enc(id)}/pairing-code`, { phone: phone.trim() })).code));
            }}
          >
            <h3>Or pair with a code</h3>
            <div className="row wrap">
              <label>
                Phone number of the WhatsApp account
                <input name="phone" type="tel" value={phone} onChange={(e) => setPhone(e.target.value)} placeholder="+15551234567" required />
              </label>
              <button type="submit">Get pairing code</button>
            </div>
            {code && (
              <p>
                Code: <code className="pairing-code" data-testid="pairing-code">{code}</code>
                <br />
                <span className="muted">On the phone: Linked devices › Link with phone number instead, then type it.</span>
              </p>
            )}
          </form>
        )}
        <div className="row wrap actions">
          <button type="button" onClick={() => void act('connection', 'Restarted: reconnecting.', () => api('POST', `/api/${enc(id)}/restart`).then(load))}>
            Restart connection
          </button>
          <ConfirmButton
            label="Log out device"
            question="Unlink the phone? It has to pair again."
            yes="Yes, log out"
            group="confirm logout"
            onYes={() => void act('connection', 'Logged out: pair again with the new QR.', () => api('POST', `/api/${enc(id)}/logout`).then(load))}
          />
        </div>
        {saidIn('connection')}
      </div>
      <div className="card">
        <h2>API key</h2>
        <p className="muted">Rotating issues a new key and stops the old one at once.</p>
        <button type="button" onClick={() => void rotate()}>
          Rotate key
        </button>
        {saidIn('key')}
        {newKey && <KeyOnce label="New API key" value={newKey} onDone={() => setNewKey(null)} />}
      </div>
      <div className="card" aria-label="plan">
        <h2>Plan</h2>
        <dl>
          <dt>Premium</dt>
          <dd data-testid="premium">{(view ?? plan)?.premium ? `yes, until ${when((view ?? plan)?.premiumUntil)}` : 'no'}</dd>
          {view && (
            <>
              <dt>Credits</dt>
              <dd data-testid="credits">{String(view.credits ?? '')}</dd>
            </>
          )}
          <dt>Quota remaining</dt>
          <dd data-testid="quota">{String((view ?? plan)?.quotaRemaining ?? '')}</dd>
        </dl>
        {admin ? (
          <>
            <form className="row wrap" onSubmit={(e) => (e.preventDefault(), void planWrite(`Added ${addCredits} credits.`, `/api/instances/${enc(id)}/credits`, { add: Number(addCredits) }))}>
              <label>
                Add credits
                <input name="credits" type="number" min={1} step={1} value={addCredits} onChange={(e) => setAddCredits(e.target.value)} required />
              </label>
              <button type="submit">Add credits</button>
            </form>
            <form className="row wrap" onSubmit={(e) => (e.preventDefault(), void planWrite(`Premium extended by ${days} days.`, `/api/instances/${enc(id)}/premium`, { days: Number(days) }))}>
              <label>
                Premium days
                <input name="days" type="number" min={1} step={1} value={days} onChange={(e) => setDays(e.target.value)} required />
              </label>
              <button type="submit">Extend premium</button>
            </form>
          </>
        ) : (
          <p className="muted">Credits and premium are changed by the administrator.</p>
        )}
        {saidIn('plan')}
      </div>
    </div>
  );
}
