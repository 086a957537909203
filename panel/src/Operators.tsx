import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { api, enc, errorText, when, type InstanceView } from './api';
import { ConfirmButton } from './Confirm';
import { KeyOnce } from './KeyOnce';

interface Operator {
  name: string;
  role: 'admin' | 'agent';
  instances: string[];
  createdAt: string;
  passwordChangedAt: string;
}

/** The admin's page of operators: add (a one-time password, shown once), reset, remove. */
export function Operators() {
  const [list, setList] = useState<Operator[] | null>(null);
  const [instances, setInstances] = useState<InstanceView[]>([]);
  const [name, setName] = useState('');
  const [role, setRole] = useState<'agent' | 'admin'>('agent');
  const [chosen, setChosen] = useState<string[]>([]);
  const [password, setPassword] = useState<{ name: string; value: string } | null>(null);
  const [error, setError] = useState('');
  const [done, setDone] = useState('');

  const load = useCallback(async () => {
    try {
      const [o, i] = await Promise.all([api<{ operators: Operator[] }>('GET', '/api/operators'), api<{ instances: InstanceView[] }>('GET', '/api/instances?limit=500')]);
      setList(o.operators);
      setInstances(i.instances);
    } catch (err) {
      setError(errorText(err));
    }
  }, []);
  useEffect(() => void load(), [load]);

  const nameOf = (id: string): string => instances.find((i) => i.instanceId === id)?.name ?? id;

  const add = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    setError('');
    setDone('');
    try {
      const r = await api<Operator & { password: string }>('POST', '/api/operators', { name: name.trim(), role, ...(role === 'agent' ? { instances: chosen } : {}) });
      setPassword({ name: r.name, value: r.password });
      setName('');
      setChosen([]);
      await load();
    } catch (err) {
      setError(errorText(err));
    }
  };

  const reset = async (o: Operator): Promise<void> => {
    setError('');
    setDone('');
    try {
      const r = await api<{ password: string }>('POST', `/api/operators/${enc(o.name)}/reset`);
      setPassword({ name: o.name, value: r.password });
      await load();
    } catch (err) {
      setError(errorText(err));
    }
  };

  const remove = async (o: Operator): Promise<void> => {
    setError('');
    try {
      await api('DELETE', `/api/operators/${enc(o.name)}`);
      setDone(`Removed ${o.name}: their sessions have ended.`);
      await load();
    } catch (err) {
      setError(errorText(err));
    }
  };

  return (
    <section>
      <h1>Operators</h1>
      <p className="muted">
        Named accounts for the people who work in the panel. An <strong>admin</strong> sees everything; an <strong>agent</strong> sees only the inbox, chats and status of the instances given to them.
        Every action is in the audit log under their name.
      </p>
      <form className="card" onSubmit={(e) => void add(e)} aria-label="add an operator">
        <h2>New operator</h2>
        <div className="row wrap">
          <label>
            Name
            <input name="name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={64} pattern="[A-Za-z0-9][A-Za-z0-9._@\-]*" title="letters, digits, . _ - @" />
          </label>
          <label>
            Role
            <select name="role" value={role} onChange={(e) => setRole(e.target.value as 'agent' | 'admin')}>
              <option value="agent">Agent (inbox of some instances)</option>
              <option value="admin">Admin (everything)</option>
            </select>
          </label>
        </div>
        {role === 'agent' && (
          <fieldset className="events">
            <legend>Instances</legend>
            {instances.length === 0 && <span className="muted">No instances yet.</span>}
            {instances.map((i) => (
              <label className="inline" key={i.instanceId}>
                <input
                  type="checkbox"
                  name="instance"
                  value={i.instanceId}
                  checked={chosen.includes(i.instanceId)}
                  onChange={(e) => setChosen((c) => (e.target.checked ? [...c, i.instanceId] : c.filter((x) => x !== i.instanceId)))}
                />
                {i.name ?? i.instanceId}
              </label>
            ))}
          </fieldset>
        )}
        <button type="submit">Add operator</button>
      </form>
      {password && <KeyOnce label={`One-time password of ${password.name}`} value={password.value} onDone={() => setPassword(null)} />}
      <p className={`said ${error ? 'error' : done ? 'ok' : ''}`} role={error ? 'alert' : 'status'}>
        {error || done}
      </p>
      {list && list.length === 0 && <p className="muted">No operators yet: the server secret is the only way in.</p>}
      {list && list.length > 0 && (
        <div className="table-scroll">
          <table aria-label="operators" className="cards">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Role</th>
                <th scope="col">Instances</th>
                <th scope="col">Password set</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.map((o) => (
                <tr key={o.name} data-operator={o.name}>
                  <td data-label="Name">
                    <strong>{o.name}</strong>
                  </td>
                  <td data-label="Role">{o.role}</td>
                  <td data-label="Instances">{o.role === 'admin' ? 'every instance' : o.instances.length ? o.instances.map(nameOf).join(', ') : 'none'}</td>
                  <td data-label="Password set">{when(o.passwordChangedAt)}</td>
                  <td data-label="">
                    <span className="row wrap">
                      <button type="button" onClick={() => void reset(o)} aria-label={`New password for ${o.name}`}>
                        New password
                      </button>
                      <ConfirmButton label="Remove" ariaLabel={`Remove ${o.name}`} question={`Remove ${o.name}? Their sessions end.`} yes="Yes, remove" group="confirm remove" onYes={() => void remove(o)} />
                    </span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
