import { useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import { api, enc, errorText, every, newestOnly, type InstanceView } from './api';
import { ConfirmButton } from './Confirm';
import { keepCreatedKey } from './created';
import { health } from './health';
import { HealthNote, StatusBadge } from './StatusBadge';

const PAGE = 100;
/** The admin list route answers at most this many at once. */
const MAX_SHOWN = 500;
/**
 * The list's statuses are refreshed from the admin route this often. Not one event stream per
 * instance: a browser keeps at most six connections to the daemon, and a list of six instances
 * would hold them all, leaving none for the panel's own requests.
 */
const REFRESH_MS = 2_000;

export function Instances() {
  const [list, setList] = useState<InstanceView[]>([]);
  const [more, setMore] = useState(false);
  const [shown, setShown] = useState(PAGE);
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState('');
  const [name, setName] = useState('');
  const [owner, setOwner] = useState('');
  const [kind, setKind] = useState<'sandbox' | 'whatsapp'>('sandbox');
  const [attentionOnly, setAttentionOnly] = useState(false);

  const newest = useRef(newestOnly()).current;
  const load = useCallback(
    async (background = false) => {
      const current = newest();
      try {
        const r = await api<{ instances: InstanceView[]; nextCursor: string | null }>('GET', `/api/instances?limit=${shown}`, undefined, { background });
        if (!current()) return;
        setList(r.instances);
        setMore(r.nextCursor !== null);
        setLoaded(true);
      } catch (err) {
        if (!background) setError(errorText(err));
      }
    },
    [shown, newest],
  );
  useEffect(() => {
    void load();
    return every(REFRESH_MS, () => void load(true));
  }, [load]);

  const create = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    setError('');
    try {
      const body = { ...(name.trim() ? { name: name.trim() } : {}), ...(owner.trim() ? { owner: owner.trim() } : {}), sandbox: kind === 'sandbox' };
      const r = await api<{ instanceId: string; apiKey: string }>('POST', '/api/instances/create', body);
      // Straight to its page, where its key is shown once and it is paired.
      keepCreatedKey(r.instanceId, r.apiKey);
      window.location.hash = `#/i/${enc(r.instanceId)}`;
    } catch (err) {
      setError(errorText(err));
    }
  };

  const remove = async (id: string): Promise<void> => {
    try {
      await api('DELETE', `/api/instances/${enc(id)}`);
      await load();
    } catch (err) {
      setError(errorText(err));
    }
  };

  const rows = list.map((i) => ({ i, h: health(i.status, i.reason, { sandbox: i.sandbox, admin: true }) }));
  const attention = rows.filter((r) => r.h.attention).length;
  const visible = attentionOnly ? rows.filter((r) => r.h.attention) : rows;

  return (
    <section>
      <h1>Instances</h1>
      <form className="card" onSubmit={(e) => void create(e)} aria-label="create an instance">
        <h2>New instance</h2>
        <div className="row wrap">
          <label>
            Name
            <input name="name" value={name} onChange={(e) => setName(e.target.value)} placeholder="optional" maxLength={100} />
          </label>
          <label>
            Owner
            <input name="owner" value={owner} onChange={(e) => setOwner(e.target.value)} placeholder="optional" maxLength={100} />
          </label>
          <label>
            Kind
            <select name="kind" value={kind} onChange={(e) => setKind(e.target.value as 'sandbox' | 'whatsapp')}>
              <option value="sandbox">Sandbox (simulated phone)</option>
              <option value="whatsapp">WhatsApp (pair a real phone)</option>
            </select>
          </label>
          <button type="submit">Create instance</button>
        </div>
      </form>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {loaded && list.length > 0 && (
        <div className="row wrap list-tools">
          <label className="inline">
            <input type="checkbox" checked={attentionOnly} onChange={(e) => setAttentionOnly(e.target.checked)} />
            Needs attention only ({attention})
          </label>
        </div>
      )}
      <ul className="list" aria-label="instances">
        {visible.map(({ i, h }) => (
          <li key={i.instanceId} className="card instance" data-instance={i.instanceId}>
            <div className="instance-head">
              <a href={`#/i/${enc(i.instanceId)}`} className="title">
                {i.name ?? i.instanceId}
              </a>
              <StatusBadge status={i.status} health={h} testId="status" />
            </div>
            <div className="instance-meta muted">
              <span>{i.instanceId}</span>
              <span>{i.sandbox ? 'sandbox' : 'WhatsApp'}</span>
              {i.owner && <span>owner {i.owner}</span>}
              <span>{i.premium ? 'premium' : `${String(i.quotaRemaining)} credits`}</span>
            </div>
            {h.attention && <HealthNote health={h} reason={i.reason} />}
            <ConfirmButton
              label="Delete"
              ariaLabel={`Delete ${i.name ?? i.instanceId}`}
              question={`Delete ${i.name ?? i.instanceId} and all its data?`}
              yes="Yes, delete"
              group="confirm delete"
              onYes={() => void remove(i.instanceId)}
            />
          </li>
        ))}
      </ul>
      {loaded && list.length === 0 && <p className="muted">No instances yet.</p>}
      {loaded && list.length > 0 && visible.length === 0 && <p className="muted">Every instance is fine: none needs attention.</p>}
      {more && shown < MAX_SHOWN && (
        <button type="button" onClick={() => setShown((n) => Math.min(MAX_SHOWN, n + PAGE))}>
          Show more
        </button>
      )}
      {more && shown >= MAX_SHOWN && <p className="muted">The first {MAX_SHOWN} instances are shown; use `gateway instance list` for the rest.</p>}
    </section>
  );
}
