import { useCallback, useEffect, useState } from 'react';
import { api, enc, errorText, type InstanceView } from './api';

interface Delivery {
  id: string;
  eventType?: string;
  status: string;
  attempts?: number;
  lastError?: string | null;
  createdAt: string;
}

export function Webhook({ id, admin }: { id: string; admin: boolean }) {
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState('');
  const [events, setEvents] = useState('');
  const [deliveries, setDeliveries] = useState<Delivery[]>([]);
  const [msg, setMsg] = useState('');
  const [error, setError] = useState('');

  const load = useCallback(async () => {
    try {
      if (admin) {
        const v = await api<InstanceView>('GET', `/api/instances/${enc(id)}`);
        setUrl(v.webhook?.url ?? '');
        setEvents(v.webhook?.events?.join(', ') ?? '');
      }
      setDeliveries((await api<{ deliveries: Delivery[] }>('GET', `/api/${enc(id)}/webhook/deliveries?limit=50`)).deliveries);
    } catch (err) {
      setError(errorText(err));
    }
  }, [id, admin]);
  useEffect(() => void load(), [load]);

  const save = async (): Promise<void> => {
    setError('');
    setMsg('');
    try {
      const list = events.split(',').map((s) => s.trim()).filter(Boolean);
      await api('PUT', `/api/${enc(id)}/webhook`, { url, ...(secret ? { secret } : {}), events: list.length ? list : null });
      setSecret('');
      setMsg('Saved');
    } catch (err) {
      setError(errorText(err));
    }
  };

  return (
    <div className="grid">
      <form className="card" onSubmit={(e) => (e.preventDefault(), void save())}>
        <h2>Webhook</h2>
        <label>
          URL
          <input type="url" value={url} onChange={(e) => setUrl(e.target.value)} required />
        </label>
        <label>
          Signing secret (leave empty to keep)
          <input type="password" value={secret} onChange={(e) => setSecret(e.target.value)} placeholder="whsec_…" />
        </label>
        <label>
          Events (comma-separated; empty = all)
          <input value={events} onChange={(e) => setEvents(e.target.value)} />
        </label>
        <div className="row">
          <button type="submit">Save</button>
          <button type="button" className="danger" onClick={() => void api('DELETE', `/api/${enc(id)}/webhook`).then(() => setMsg('Removed'), (err: unknown) => setError(errorText(err)))}>
            Remove
          </button>
        </div>
        {msg && <p className="ok">{msg}</p>}
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
      </form>
      <div className="card">
        <h2>Deliveries</h2>
        <button type="button" onClick={() => void load()}>
          Refresh
        </button>
        <table>
          <thead>
            <tr>
              <th>When</th>
              <th>Event</th>
              <th>Status</th>
              <th>Tries</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {deliveries.map((d) => (
              <tr key={d.id}>
                <td>{d.createdAt}</td>
                <td>{d.eventType ?? ''}</td>
                <td title={d.lastError ?? ''}>{d.status}</td>
                <td>{d.attempts ?? ''}</td>
                <td>
                  <button type="button" onClick={() => void api('POST', `/api/${enc(id)}/webhook/deliveries/${enc(d.id)}/redeliver`).then(load, (err: unknown) => setError(errorText(err)))}>
                    Redeliver
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {deliveries.length === 0 && <p className="muted">No deliveries.</p>}
      </div>
    </div>
  );
}
