import { useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import { api, enc, errorText, EVENT_TYPES, every, newestOnly, when, type WebhookView } from './api';

interface Delivery {
  id: string;
  type: string;
  createdAt: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  lastError: string | null;
  lastStatus: number | null;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  finishedAt: string | null;
  redeliveries: number;
}
type Counts = Record<Delivery['status'], number>;

/** A receiver's 2xx is a success (green); an error or any other status is not (red). */
function answerTone(d: Delivery): string {
  if (d.lastError) return 'error-text';
  if (d.lastStatus !== null && d.lastStatus >= 200 && d.lastStatus < 300) return 'ok-text';
  return d.lastStatus !== null ? 'error-text' : '';
}

/** A signing secret in the Standard Webhooks form: whsec_ and 24 random bytes in base64. */
function newSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}

export function Webhook({ id }: { id: string }) {
  const [current, setCurrent] = useState<WebhookView | null | undefined>(undefined);
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState('');
  const [showSecret, setShowSecret] = useState(false);
  const [removeSecret, setRemoveSecret] = useState(false);
  const [all, setAll] = useState(true);
  const [events, setEvents] = useState<string[]>([]);
  const [deliveries, setDeliveries] = useState<Delivery[]>([]);
  const [counts, setCounts] = useState<Counts | null>(null);
  const [filter, setFilter] = useState('');
  const [msg, setMsg] = useState('');
  const [error, setError] = useState('');
  const [testMsg, setTestMsg] = useState('');

  // The form starts from the stored webhook (GET /webhook: an instance key may read its own).
  const adopt = useCallback((w: WebhookView | null) => {
    setCurrent(w);
    setUrl(w?.url ?? '');
    setAll(!w || w.events === 'all');
    setEvents(w && w.events !== 'all' ? w.events : []);
  }, []);
  // Why the stored webhook could not be read ('' while reading or once read); `reads` asks again.
  const [loadError, setLoadError] = useState('');
  const [reads, setReads] = useState(0);
  useEffect(() => {
    setLoadError('');
    api<{ webhook: WebhookView | null }>('GET', `/api/${enc(id)}/webhook`).then(
      (r) => adopt(r.webhook),
      (err: unknown) => setLoadError(errorText(err)),
    );
  }, [id, adopt, reads]);

  const newest = useRef(newestOnly()).current;
  const loadDeliveries = useCallback(
    async (background = false) => {
      const current = newest();
      try {
        const r = await api<{ deliveries: Delivery[]; counts: Counts }>('GET', `/api/${enc(id)}/webhook/deliveries?limit=50${filter ? `&status=${filter}` : ''}`, undefined, { background });
        if (!current()) return;
        setDeliveries(r.deliveries);
        setCounts(r.counts);
      } catch (err) {
        if (!background) setError(errorText(err));
      }
    },
    [id, filter, newest],
  );
  useEffect(() => void loadDeliveries(), [loadDeliveries]);
  // While something is on its way, the list follows it.
  const pending = (counts?.pending ?? 0) > 0;
  useEffect(() => (pending ? every(1_000, () => void loadDeliveries(true)) : undefined), [pending, loadDeliveries]);

  const save = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    setError('');
    setMsg('');
    if (!all && events.length === 0) {
      setError('Pick at least one event, or "every event".');
      return;
    }
    try {
      const body = { url: url.trim(), ...(removeSecret ? { secret: null } : secret ? { secret } : {}), events: all ? null : events };
      const r = await api<{ webhook: WebhookView }>('PUT', `/api/${enc(id)}/webhook`, body);
      adopt(r.webhook);
      setSecret('');
      setShowSecret(false);
      setRemoveSecret(false);
      setMsg('Saved.');
    } catch (err) {
      setError(errorText(err));
    }
  };

  const remove = async (): Promise<void> => {
    setError('');
    setMsg('');
    try {
      await api('DELETE', `/api/${enc(id)}/webhook`);
      adopt(null);
      setMsg('Removed: no more events are sent.');
    } catch (err) {
      setError(errorText(err));
    }
  };

  const redeliver = async (d: Delivery): Promise<void> => {
    setError('');
    try {
      await api('POST', `/api/${enc(id)}/webhook/deliveries/${enc(d.id)}/redeliver`);
      await loadDeliveries();
    } catch (err) {
      setError(errorText(err));
    }
  };

  const sendTest = async (): Promise<void> => {
    setError('');
    setTestMsg('');
    try {
      const r = await api<{ delivery: { id: string } }>('POST', `/api/${enc(id)}/webhook/test`);
      setTestMsg(`Queued: a webhook.test event (${r.delivery.id}). Its delivery appears below.`);
      await loadDeliveries();
    } catch (err) {
      setError(errorText(err));
    }
  };

  const toggle = (t: string, on: boolean): void => setEvents((es) => (on ? [...es.filter((x) => x !== t), t] : es.filter((x) => x !== t)));

  return (
    <div className="grid webhook">
      <form className="card" onSubmit={(e) => void save(e)} aria-label="webhook settings">
        <h2>Webhook</h2>
        {current === null && <p className="muted">No webhook: events are not sent anywhere.</p>}
        {current && (
          <p className="muted" data-testid="webhook-current">
            Sending {current.events === 'all' ? 'every event' : current.events.join(', ')} to {current.url}, {current.signed ? 'signed' : 'not signed'}.
          </p>
        )}
        {/* The fields appear once the stored webhook is known: a late answer would otherwise overwrite
            what the user has typed meanwhile (adopt() sets every field). */}
        {current === undefined ? (
          loadError ? (
            <p className="error" role="alert">
              The stored webhook could not be read: {loadError}{' '}
              <button type="button" onClick={() => setReads((n) => n + 1)}>
                Try again
              </button>
            </p>
          ) : (
            <p className="muted">Reading the stored webhook…</p>
          )
        ) : (
          <>
            <label>
              URL
              <input name="url" type="url" value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://example.com/hook" required />
            </label>
            <label>
              Signing secret {current?.signed ? '(empty: keep the current one)' : '(empty: not signed)'}
              <span className="row">
                <input
                  className="grow"
                  name="secret"
                  type={showSecret ? 'text' : 'password'}
                  autoComplete="off"
                  value={secret}
                  onChange={(e) => setSecret(e.target.value)}
                  placeholder="whsec_…"
                  disabled={removeSecret}
                />
                <button
                  type="button"
                  onClick={() => {
                    setSecret(newSecret());
                    setShowSecret(true);
                    setRemoveSecret(false);
                  }}
                >
                  Generate
                </button>
              </span>
            </label>
            {showSecret && secret && <p className="muted">Copy this secret into the receiver before saving: it is not shown again.</p>}
            {current?.signed && (
              <label className="inline">
                <input type="checkbox" checked={removeSecret} onChange={(e) => setRemoveSecret(e.target.checked)} />
                Remove the secret (stop signing)
              </label>
            )}
            <fieldset className="events">
              <legend>Events</legend>
              <label className="inline">
                <input type="checkbox" checked={all} onChange={(e) => setAll(e.target.checked)} />
                Every event
              </label>
              {!all &&
                EVENT_TYPES.map((t) => (
                  <label className="inline" key={t}>
                    <input type="checkbox" name="event" value={t} checked={events.includes(t)} onChange={(e) => toggle(t, e.target.checked)} />
                    <code>{t}</code>
                  </label>
                ))}
            </fieldset>
            <div className="row wrap">
              <button type="submit">Save webhook</button>
              {current !== null && (
                <button type="button" className="danger" onClick={() => void remove()}>
                  Remove webhook
                </button>
              )}
            </div>
          </>
        )}
        {msg && (
          <p className="ok" role="status">
            {msg}
          </p>
        )}
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
      </form>
      <div className="card deliveries">
        <h2>Deliveries</h2>
        <div className="row wrap">
          <label>
            Show
            <select name="status" value={filter} onChange={(e) => setFilter(e.target.value)}>
              <option value="">all</option>
              <option value="pending">pending</option>
              <option value="delivered">delivered</option>
              <option value="failed">failed</option>
            </select>
          </label>
          <button type="button" onClick={() => void loadDeliveries()}>
            Refresh
          </button>
          <button type="button" onClick={() => void sendTest()} disabled={!current} aria-describedby="test-event-note">
            Send test event
          </button>
        </div>
        <p className="muted" id="test-event-note">
          A <code>webhook.test</code> event, signed and retried like any other, whatever the events chosen above.
        </p>
        {testMsg && (
          <p className="ok" role="status">
            {testMsg}
          </p>
        )}
        {counts && (
          <p className="muted" data-testid="delivery-counts">
            {counts.pending} pending · {counts.delivered} delivered · {counts.failed} failed
          </p>
        )}
        {deliveries.length > 0 && (
          <div className="table-scroll">
            <table aria-label="deliveries" className="cards">
              <thead>
                <tr>
                  <th scope="col">Created</th>
                  <th scope="col">Event</th>
                  <th scope="col">Status</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Last answer</th>
                  <th scope="col">
                    <span className="sr-only">Action</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {deliveries.map((d) => (
                  <tr key={d.id} data-delivery={d.id}>
                    <td data-label="Created" title={d.createdAt}>
                      {when(d.createdAt)}
                    </td>
                    <td data-label="Event">
                      <code>{d.type}</code>
                    </td>
                    <td data-label="Status">
                      <span className={`status d-${d.status}`} data-testid="delivery-status">
                        {d.status}
                      </span>
                      {d.status === 'pending' && d.nextAttemptAt && <div className="muted">next {when(d.nextAttemptAt)}</div>}
                    </td>
                    <td data-label="Attempts" data-testid="delivery-attempts">
                      {d.attempts}
                      {d.redeliveries > 0 && <span className="muted"> ({d.redeliveries} redelivered)</span>}
                    </td>
                    <td data-label="Last answer" className={`last-answer ${answerTone(d)}`} data-testid="delivery-error">
                      {d.lastError ?? (d.lastStatus !== null ? `HTTP ${d.lastStatus}` : '')}
                    </td>
                    <td data-label="">
                      <button type="button" disabled={d.status === 'pending'} onClick={() => void redeliver(d)} aria-label={`Redeliver ${d.type} ${d.id}`}>
                        Redeliver
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {counts && deliveries.length === 0 && <p className="muted">No deliveries{filter ? ` ${filter}` : ''}.</p>}
      </div>
    </div>
  );
}
