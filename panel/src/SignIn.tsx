import { useState, type FormEvent } from 'react';
import { api, ApiError, errorText, type Session } from './api';

/** One message for every wrong credential: it never says whether an instance or operator exists. */
function signInError(err: unknown): string {
  if (err instanceof ApiError && err.status === 401) return 'Sign-in refused: invalid credentials. Check the server secret, your operator name and password, or the instance id and its API key.';
  if (err instanceof ApiError && err.status === 429) return 'Too many failed sign-ins from this address: wait a minute, then try again.';
  return errorText(err);
}

type Mode = 'admin' | 'operator' | 'instance';

export function SignIn({ onSignedIn, notice }: { onSignedIn: (s: Session) => void; notice?: string }) {
  const [mode, setMode] = useState<Mode>('admin');
  const [secret, setSecret] = useState('');
  const [operator, setOperator] = useState('');
  const [password, setPassword] = useState('');
  const [instanceId, setInstanceId] = useState('');
  const [apiKey, setApiKey] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      const body = mode === 'admin' ? { secret } : mode === 'operator' ? { operator: operator.trim(), password } : { instanceId: instanceId.trim(), apiKey: apiKey.trim() };
      onSignedIn(await api<Session>('POST', '/panel/api/session', body));
    } catch (err) {
      setError(signInError(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <header className="top">
        <span className="brand">Gateway panel</span>
      </header>
      <main className="page signin">
        <h1>Sign in</h1>
        {notice && (
          <p className="card notice" role="status">
            {notice}
          </p>
        )}
        <form onSubmit={(e) => void submit(e)} className="card">
          <fieldset className="choice">
            <legend>Sign in with</legend>
            <label className="inline">
              <input type="radio" name="mode" value="admin" checked={mode === 'admin'} onChange={() => setMode('admin')} />
              Server secret (every instance)
            </label>
            <label className="inline">
              <input type="radio" name="mode" value="operator" checked={mode === 'operator'} onChange={() => setMode('operator')} />
              Operator name and password
            </label>
            <label className="inline">
              <input type="radio" name="mode" value="instance" checked={mode === 'instance'} onChange={() => setMode('instance')} />
              Instance id and API key (that instance)
            </label>
          </fieldset>
          {mode === 'admin' && (
            <label>
              Server secret
              <input name="secret" type="password" autoComplete="current-password" value={secret} onChange={(e) => setSecret(e.target.value)} required />
            </label>
          )}
          {mode === 'operator' && (
            <>
              <label>
                Operator
                <input name="operator" autoComplete="username" value={operator} onChange={(e) => setOperator(e.target.value)} required maxLength={64} />
              </label>
              <label>
                Password
                <input name="password" type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} required />
              </label>
            </>
          )}
          {mode === 'instance' && (
            <>
              <label>
                Instance id
                <input name="instanceId" autoComplete="username" value={instanceId} onChange={(e) => setInstanceId(e.target.value)} placeholder="inst_…" required />
              </label>
              <label>
                API key
                <input name="apiKey" type="password" autoComplete="current-password" value={apiKey} onChange={(e) => setApiKey(e.target.value)} placeholder="gw_live_…" required />
              </label>
            </>
          )}
          <button type="submit" disabled={busy}>
            Sign in
          </button>
          {error && (
            <p className="error" role="alert">
              {error}
            </p>
          )}
        </form>
      </main>
    </>
  );
}
