import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { api, enc, errorText, liveEvents, type InstanceView } from './api';
import { KeyOnce } from './KeyOnce';

/** Live status of every listed instance (a stream each, at most this many). */
const LIVE_MAX = 25;

export function Instances() {
  const [list, setList] = useState<InstanceView[]>([]);
  const [error, setError] = useState('');
  const [name, setName] = useState('');
  const [kind, setKind] = useState<'sandbox' | 'whatsapp'>('sandbox');
  const [created, setCreated] = useState<{ id: string; key: string } | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      const r = await api<{ instances: InstanceView[] }>('GET', '/api/instances?limit=200');
      setList(r.instances);
    } catch (err) {
      setError(errorText(err));
    }
  }, []);
  useEffect(() => void load(), [load]);

  const ids = list.slice(0, LIVE_MAX).map((i) => i.instanceId).join(',');
  useEffect(() => {
    const closers = ids
      .split(',')
      .filter(Boolean)
      .map((id) => liveEvents(id, ['instance.status'], (_t, data) => setList((l) => l.map((i) => (i.instanceId === id ? { ...i, status: String(data.to) } : i)))));
    return () => closers.forEach((c) => c());
  }, [ids]);

  const create = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    setError('');
    try {
      const r = await api<{ instanceId: string; apiKey: string }>('POST', '/api/instances/create', { ...(name.trim() ? { name: name.trim() } : {}), sandbox: kind === 'sandbox' });
      setCreated({ id: r.instanceId, key: r.apiKey });
      setName('');
      await load();
    } catch (err) {
      setError(errorText(err));
    }
  };

  const remove = async (id: string): Promise<void> => {
    setConfirming(null);
    try {
      await api('DELETE', `/api/instances/${enc(id)}`);
      await load();
    } catch (err) {
      setError(errorText(err));
    }
  };

  return (
    <section>
      <h1>Instances</h1>
      <form className="card row wrap" onSubmit={(e) => void create(e)}>
        <label>
          Name
          <input name="name" value={name} onChange={(e) => setName(e.target.value)} placeholder="optional" />
        </label>
        <label>
          Kind
          <select name="kind" value={kind} onChange={(e) => setKind(e.target.value as 'sandbox' | 'whatsapp')}>
            <option value="sandbox">Sandbox</option>
            <option value="whatsapp">WhatsApp</option>
          </select>
        </label>
        <button type="submit">Create instance</button>
      </form>
      {created && <KeyOnce label={`API key of ${created.id}`} value={created.key} onDone={() => setCreated(null)} />}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <ul className="list" aria-label="instances">
        {list.map((i) => (
          <li key={i.instanceId} className="card instance" data-instance={i.instanceId}>
            <a href={`#/i/${enc(i.instanceId)}`} className="title">
              {i.name ?? i.instanceId}
            </a>
            <span className="muted">{i.instanceId}</span>
            <span className="muted">{i.sandbox ? 'sandbox' : 'WhatsApp'}</span>
            <span className={`status s-${i.status}`} data-testid="status">
              {i.status}
            </span>
            {confirming === i.instanceId ? (
              <span className="row" role="group" aria-label="confirm delete">
                <span>Delete {i.instanceId} and all its data?</span>
                <button type="button" className="danger" onClick={() => void remove(i.instanceId)}>
                  Yes, delete
                </button>
                <button type="button" onClick={() => setConfirming(null)}>
                  Cancel
                </button>
              </span>
            ) : (
              <button type="button" className="danger" onClick={() => setConfirming(i.instanceId)}>
                Delete
              </button>
            )}
          </li>
        ))}
      </ul>
      {list.length === 0 && <p className="muted">No instances yet.</p>}
    </section>
  );
}
