import { useState, type FormEvent } from 'react';
import { api, errorText, type Session } from './api';

export function SignIn({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const [mode, setMode] = useState<'admin' | 'instance'>('admin');
  const [secret, setSecret] = useState('');
  const [instanceId, setInstanceId] = useState('');
  const [apiKey, setApiKey] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      const body = mode === 'admin' ? { secret } : { instanceId: instanceId.trim(), apiKey: apiKey.trim() };
      onSignedIn(await api<Session>('POST', '/panel/api/session', body));
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="page signin">
      <h1>Sign in</h1>
      <div className="tabs" role="tablist">
        <button type="button" role="tab" aria-selected={mode === 'admin'} onClick={() => setMode('admin')}>
          Server secret
        </button>
        <button type="button" role="tab" aria-selected={mode === 'instance'} onClick={() => setMode('instance')}>
          Instance key
        </button>
      </div>
      <form onSubmit={(e) => void submit(e)} className="card">
        {mode === 'admin' ? (
          <label>
            Server secret
            <input name="secret" type="password" autoComplete="current-password" value={secret} onChange={(e) => setSecret(e.target.value)} required />
          </label>
        ) : (
          <>
            <label>
              Instance id
              <input name="instanceId" value={instanceId} onChange={(e) => setInstanceId(e.target.value)} required />
            </label>
            <label>
              API key
              <input name="apiKey" type="password" autoComplete="current-password" value={apiKey} onChange={(e) => setApiKey(e.target.value)} required />
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
  );
}
