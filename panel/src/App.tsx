import { useCallback, useEffect, useState } from 'react';
import { api, ApiError, every, onUnauthorized, sessionSettled, setCsrf, type Session } from './api';
import { SignIn } from './SignIn';
import { Instances } from './Instances';
import { InstancePage } from './InstancePage';

function useHash(): string {
  const [hash, setHash] = useState(() => window.location.hash);
  useEffect(() => {
    const on = (): void => setHash(window.location.hash);
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return hash;
}

const ENDED = 'Your session has ended (12 hours without use, signed out elsewhere, or the key it was opened with was rotated). Sign in again.';

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [notice, setNotice] = useState('');
  const hash = useHash();

  const adopt = useCallback((s: Session | null) => {
    setCsrf(s?.csrfToken ?? '');
    setSession(s);
    if (s) setNotice('');
  }, []);

  useEffect(() => {
    api<Session>('GET', '/panel/api/session').then(adopt, () => adopt(null));
  }, [adopt]);

  // A refused call or a cut event stream may mean the session ended: ask (without counting as use).
  const signedIn = session !== null && session !== undefined;
  useEffect(() => {
    if (!signedIn) return;
    const check = (): void => {
      void sessionSettled()
        .then(() => api<Session>('GET', '/panel/api/session', undefined, { background: true }))
        .catch((err: unknown) => {
          if (err instanceof ApiError && err.status === 401) {
            adopt(null);
            setNotice(ENDED);
          }
        });
    };
    const offRefused = onUnauthorized(check);
    const offTimer = every(60_000, check);
    return () => {
      offRefused();
      offTimer();
    };
  }, [signedIn, adopt]);

  const signOut = async (): Promise<void> => {
    await api('DELETE', '/panel/api/session').catch(() => undefined);
    adopt(null);
    setNotice('Signed out.');
    window.location.hash = '';
  };

  if (session === undefined) return <main className="page">Loading…</main>;
  if (session === null) return <SignIn onSignedIn={adopt} notice={notice} />;

  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean);
  let content;
  if (parts[0] === 'i' && parts[1]) content = <InstancePage key={parts[1]} id={decodeURIComponent(parts[1])} tab={parts[2] ?? 'overview'} session={session} onSession={adopt} />;
  else if (session.role === 'instance' && session.instanceId) content = <InstancePage key={session.instanceId} id={session.instanceId} tab="overview" session={session} onSession={adopt} />;
  else content = <Instances />;

  return (
    <>
      <header className="top">
        <a href="#/" className="brand">
          Gateway panel
        </a>
        <span className="who" title={session.role === 'admin' ? 'signed in with the server secret: every instance' : 'signed in with this instance\'s key'}>
          {session.role === 'admin' ? 'admin' : session.instanceId}
        </span>
        <button type="button" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <main className="page">{content}</main>
    </>
  );
}
