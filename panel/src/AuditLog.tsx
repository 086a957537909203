import { useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import { api, enc, errorText, newestOnly, when } from './api';

interface Entry {
  at: string;
  actor: string;
  action: string;
  instanceId?: string;
  target?: string;
  outcome: string;
}

/**
 * Who did what: the admin's whole log with filters (instance, actor), or one instance's entries
 * (`instanceId`: the instance page's tab). Newest first, a page at a time.
 */
export function AuditLog({ instanceId }: { instanceId?: string }) {
  const [entries, setEntries] = useState<Entry[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState('');
  const [instance, setInstance] = useState('');
  const [actor, setActor] = useState('');
  const [filters, setFilters] = useState<{ instance: string; actor: string }>({ instance: '', actor: '' });

  const newest = useRef(newestOnly()).current;
  const query = useCallback(
    (cursor?: string) => {
      const inst = instanceId ?? filters.instance.trim();
      const parts = ['limit=50', inst ? `instanceId=${enc(inst)}` : '', filters.actor.trim() ? `actor=${enc(filters.actor.trim())}` : '', cursor ? `cursor=${enc(cursor)}` : ''];
      return `/api/audit?${parts.filter(Boolean).join('&')}`;
    },
    [instanceId, filters],
  );
  const load = useCallback(async () => {
    const current = newest();
    setError('');
    try {
      const r = await api<{ entries: Entry[]; nextCursor: string | null }>('GET', query());
      if (!current()) return;
      setEntries(r.entries);
      setNext(r.nextCursor);
      setLoaded(true);
    } catch (err) {
      setError(errorText(err));
    }
  }, [query, newest]);
  useEffect(() => void load(), [load]);

  const more = async (): Promise<void> => {
    if (!next) return;
    try {
      const r = await api<{ entries: Entry[]; nextCursor: string | null }>('GET', query(next));
      setEntries((es) => [...es, ...r.entries]);
      setNext(r.nextCursor);
    } catch (err) {
      setError(errorText(err));
    }
  };

  const apply = (e: FormEvent): void => {
    e.preventDefault();
    setFilters({ instance, actor });
  };

  const Heading = instanceId ? 'h2' : 'h1';
  return (
    <section className={instanceId ? 'card' : ''}>
      <Heading>Audit log</Heading>
      <p className="muted">Sign-ins, key and secret rotations, plan, webhook and flow changes, instances created, logged out and deleted, replies, claims and releases: who, when, and how it ended. Never a secret or a message.</p>
      <form className="row wrap" onSubmit={apply} aria-label="filter the audit log">
        {!instanceId && (
          <label>
            Instance
            <input name="instanceId" value={instance} onChange={(e) => setInstance(e.target.value)} placeholder="inst_… (all)" />
          </label>
        )}
        <label>
          Actor
          <input name="actor" value={actor} onChange={(e) => setActor(e.target.value)} placeholder="operator:ann, secret, instance:…" list="audit-actors" />
        </label>
        <datalist id="audit-actors">
          {[...new Set(entries.map((e) => e.actor))].map((a) => (
            <option key={a} value={a} />
          ))}
        </datalist>
        <button type="submit">Filter</button>
      </form>
      <p className={`said ${error ? 'error' : ''}`} role={error ? 'alert' : 'status'}>
        {error}
      </p>
      {loaded && entries.length === 0 && <p className="muted">Nothing recorded{filters.actor || filters.instance ? ' for these filters' : ''}.</p>}
      {entries.length > 0 && (
        <div className="table-scroll">
          <table aria-label="audit entries" className="cards">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">Action</th>
                {!instanceId && <th scope="col">Instance</th>}
                <th scope="col">Target</th>
                <th scope="col">Outcome</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((e, i) => (
                <tr key={`${e.at}-${i}`} data-action={e.action} data-actor={e.actor}>
                  <td data-label="When" title={e.at}>
                    {when(e.at)}
                  </td>
                  <td data-label="Who">{e.actor}</td>
                  <td data-label="Action">
                    <code>{e.action}</code>
                  </td>
                  {!instanceId && <td data-label="Instance">{e.instanceId ? <a href={`#/i/${enc(e.instanceId)}`}>{e.instanceId}</a> : ''}</td>}
                  <td data-label="Target">{e.target ?? ''}</td>
                  <td data-label="Outcome">
                    <span className={`outcome ${e.outcome === 'ok' ? 'ok-text' : 'error-text'}`}>{e.outcome}</span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {next && (
        <button type="button" onClick={() => void more()}>
          Show older entries
        </button>
      )}
    </section>
  );
}
