import { useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import { api, enc, errorText, liveEvents, sessionChanging, when, type InstanceView, type Session } from './api';
import { KeyOnce } from './KeyOnce';
import { ConfirmButton } from './Confirm';
import { takeCreatedKey } from './created';
import { health } from './health';
import { HealthNote, StatusBadge } from './StatusBadge';
import { PlanCard } from './PlanCard';
import { SettingsCard } from './SettingsCard';

interface Props {
  id: string;
  session: Session;
  onSession: (s: Session) => void;
  view: InstanceView | null;
  reloadView: () => Promise<void>;
}

type Card = 'connection' | 'key' | 'sandbox';
interface StatusRead {
  status: string;
  reason: string | null;
  premium: boolean;
  premiumUntil: string | null;
  quotaRemaining: string | number;
}

/** What an action said, in the card it was done in: the line is always there, so nothing moves when it appears. */
function Said({ said, card }: { said: { card: Card; ok: boolean; text: string } | null; card: Card }) {
  const mine = said?.card === card ? said : null;
  return (
    <p className={`said ${mine ? (mine.ok ? 'ok' : 'error') : ''}`} role={mine && !mine.ok ? 'alert' : 'status'}>
      {mine?.text ?? ''}
    </p>
  );
}

export function Overview({ id, session, onSession, view, reloadView }: Props) {
  const admin = session.role === 'admin';
  const agent = session.role === 'agent';
  const sandbox = view?.sandbox ?? session.sandbox ?? false;
  const [read, setRead] = useState<StatusRead | null>(null);
  const [status, setStatus] = useState('');
  const [reason, setReason] = useState<string | null>(null);
  const [qr, setQr] = useState<string | null>(null);
  // The key of an instance created a moment ago is shown at the top, once; a rotated one in its card.
  const [createdKey, setCreatedKey] = useState<string | null>(() => takeCreatedKey(id));
  const [newKey, setNewKey] = useState<string | null>(null);
  const [said, setSaid] = useState<{ card: Card; ok: boolean; text: string } | null>(null);
  const [phone, setPhone] = useState('');
  const [code, setCode] = useState('');
  const [from, setFrom] = useState('+15551234567');
  const [fromName, setFromName] = useState('Test customer');
  const [text, setText] = useState('Hello!');

  // Answers can overtake each other and the event stream: only the newest QR request is drawn,
  // and a status read before the last live event is older than what that event said.
  const qrSeq = useRef(0);
  const lastEventAt = useRef(0);
  const loadQr = useCallback(async () => {
    if (sandbox) return;
    const seq = ++qrSeq.current;
    try {
      const r = await api<{ qrImage: string }>('GET', `/api/${enc(id)}/qr-code`);
      if (seq === qrSeq.current) setQr(r.qrImage);
    } catch {
      if (seq === qrSeq.current) setQr(null);
    }
  }, [id, sandbox]);

  const load = useCallback(async () => {
    try {
      const sentAt = performance.now();
      const s = await api<StatusRead>('GET', `/api/${enc(id)}/status`);
      setRead(s);
      if (lastEventAt.current > sentAt) return;
      setStatus(s.status);
      setReason(s.reason);
      if (s.status === 'qr_code_generated' && !agent) await loadQr();
    } catch (err) {
      setSaid({ card: 'connection', ok: false, text: errorText(err) });
    }
  }, [id, loadQr, agent]);

  useEffect(() => {
    void load();
    // One stream for the page: status changes and each new QR, drawn as they come.
    return liveEvents(id, agent ? ['instance.status'] : ['instance.status', 'qr.updated'], (type, data) => {
      lastEventAt.current = performance.now();
      if (type === 'instance.status') {
        const to = String(data.to);
        setStatus(to);
        setReason(typeof data.reason === 'string' ? data.reason : null);
        if (to === 'connected') setCode('');
        if (to !== 'qr_code_generated') setQr(null);
        else void loadQr();
      } else void loadQr();
    });
  }, [id, load, loadQr, agent]);

  const act = async (card: Card, what: string, f: () => Promise<unknown>): Promise<void> => {
    setSaid(null);
    try {
      await f();
      if (what) setSaid({ card, ok: true, text: what });
    } catch (err) {
      setSaid({ card, ok: false, text: errorText(err) });
    }
  };

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

  const inbound = (e: FormEvent): void => {
    e.preventDefault();
    void act('sandbox', `Received "${text}" from ${fromName || from}: it is in the inbox, and a flow answers it.`, () =>
      api('POST', `/api/${enc(id)}/sandbox/inbound`, { from: from.trim(), message: text, ...(fromName.trim() ? { name: fromName.trim() } : {}) }),
    );
  };

  const h = health(status, reason, { sandbox, admin });
  const canPair = !agent && status !== '' && status !== 'connected';

  return (
    <div className="grid">
      {createdKey && <KeyOnce label={`Created. API key of ${id}`} value={createdKey} onDone={() => setCreatedKey(null)} />}
      <div className="card">
        <h2>Connection</h2>
        <p className="status-line">
          <StatusBadge status={status} health={h} testId="instance-status" />
        </p>
        <HealthNote health={h} reason={reason} />
        {!sandbox && qr && status === 'qr_code_generated' && <img className="qr" src={qr} alt="Pairing QR code: scan it with WhatsApp" width={264} height={264} data-testid="qr" />}
        {sandbox && !agent && status !== 'connected' && status !== '' && (
          <div className="row wrap">
            <button type="button" className="primary" onClick={() => void act('connection', 'Scanned: the simulated phone is linked.', () => api('POST', `/api/${enc(id)}/sandbox/scan`))}>
              Simulate a scan
            </button>
          </div>
        )}
        {canPair && (
          <form
            className="pair-code"
            onSubmit={(e) => {
              e.preventDefault();
              void act('connection', '', async () => setCode((await api<{ code: string }>('POST', `/api/${enc(id)}/pairing-code`, { phone: phone.trim() })).code));
            }}
          >
            <h3>{sandbox ? 'Or try pairing with a code' : 'Or pair with a code'}</h3>
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
        {!agent && (
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
            {sandbox && status === 'connected' && (
              <button type="button" onClick={() => void act('connection', 'The simulated phone went offline.', () => api('POST', `/api/${enc(id)}/sandbox/disconnect`))}>
                Simulate a disconnect
              </button>
            )}
          </div>
        )}
        {agent && <p className="muted">Read only: the administrator pairs and restarts this instance.</p>}
        <Said said={said} card="connection" />
      </div>
      {sandbox && !agent && (
        <form className="card" onSubmit={inbound} aria-label="simulate an inbound message">
          <h2>Sandbox: a customer writes</h2>
          <p className="muted">Plays a message from a customer, handled like a real one (webhook, chatbot, inbox).</p>
          <div className="row wrap">
            <label>
              From (phone)
              <input name="from" type="tel" value={from} onChange={(e) => setFrom(e.target.value)} required />
            </label>
            <label>
              Name
              <input name="fromName" value={fromName} onChange={(e) => setFromName(e.target.value)} maxLength={100} />
            </label>
          </div>
          <label>
            Message
            <textarea name="message" rows={2} value={text} onChange={(e) => setText(e.target.value)} required />
          </label>
          <button type="submit" disabled={status !== 'connected'} aria-describedby="inbound-note">
            Simulate an inbound message
          </button>
          <p className="muted" id="inbound-note">
            {status === 'connected' ? '' : 'Connect it first (Simulate a scan).'}
          </p>
          <Said said={said} card="sandbox" />
        </form>
      )}
      {!agent && <SettingsCard id={id} session={session} sandbox={sandbox} />}
      {!agent && (
        <div className="card">
          <h2>API key</h2>
          <p className="muted">Rotating issues a new key and stops the old one at once.</p>
          <button type="button" onClick={() => void rotate()}>
            Rotate key
          </button>
          <Said said={said} card="key" />
          {newKey && <KeyOnce label="New API key" value={newKey} onDone={() => setNewKey(null)} />}
        </div>
      )}
      {!agent && <PlanCard id={id} admin={admin} view={view} read={read} reload={async () => Promise.all([reloadView(), load()]).then(() => undefined)} premiumUntil={when((view ?? read)?.premiumUntil)} />}
    </div>
  );
}
