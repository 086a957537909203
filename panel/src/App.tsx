import { useCallback, useEffect, useState } from 'react';
import { api, ApiError, every, onUnauthorized, sessionSettled, setCsrf, whoIs, type Session } from './api';
import { SignIn } from './SignIn';
import { Instances } from './Instances';
import { InstancePage } from './InstancePage';
import { Operators } from './Operators';
import { AuditLog } from './AuditLog';
import { AgentHome } from './AgentHome';

function useHash(): string {
  const [hash, setHash] = useState(() => window.location.hash);
  useEffect(() => {
    const on = (): void => setHash(window.location.hash);
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return hash;
}

const ENDED = 'Your session has ended (12 hours without use, signed out elsewhere, or the key or password it was opened with changed). Sign in again.';

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

  // Each page says where it is in the tab's title.
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean);
  const signedInNow = Boolean(session);
  useEffect(() => {
    const p = hash.replace(/^#\/?/, '').split('/').filter(Boolean);
    const where = p[0] === 'operators' ? 'Operators' : p[0] === 'audit' ? 'Audit log' : p[0] === 'i' ? (p[2] ?? 'Instance') : 'Instances';
    document.title = signedInNow ? `${where[0]!.toUpperCase()}${where.slice(1)} · Gateway panel` : 'Sign in · Gateway panel';
  }, [hash, signedInNow]);

  const signOut = async (): Promise<void> => {
    await api('DELETE', '/panel/api/session').catch(() => undefined);
    adopt(null);
    setNotice('Signed out.');
    window.location.hash = '';
  };

  if (session === undefined) return <main className="page">Loading…</main>;
  if (session === null) return <SignIn onSignedIn={adopt} notice={notice} />;

  const admin = session.role === 'admin';
  let content;
  if (parts[0] === 'i' && parts[1]) {
    content = (
      <InstancePage
        key={parts[1]}
        id={decodeURIComponent(parts[1])}
        tab={parts[2] ?? 'overview'}
        chat={parts[3] ? decodeURIComponent(parts[3]) : null}
        session={session}
        onSession={adopt}
      />
    );
  } else if (session.role === 'instance' && session.instanceId) content = <InstancePage key={session.instanceId} id={session.instanceId} tab="overview" chat={null} session={session} onSession={adopt} />;
  else if (admin && parts[0] === 'operators') content = <Operators />;
  else if (admin && parts[0] === 'audit') content = <AuditLog />;
  else if (session.role === 'agent') content = <AgentHome session={session} />;
  else content = <Instances />;

  return (
    <>
      <header className="top">
        <a href="#/" className="brand">
          Gateway panel
        </a>
        {admin && (
          <nav className="top-nav" aria-label="main">
            <a href="#/" aria-current={parts.length === 0 ? 'page' : undefined}>
              Instances
            </a>
            <a href="#/operators" aria-current={parts[0] === 'operators' ? 'page' : undefined}>
              Operators
            </a>
            <a href="#/audit" aria-current={parts[0] === 'audit' ? 'page' : undefined}>
              Audit log
            </a>
          </nav>
        )}
        <span className="who" data-testid="who" title={session.role === 'admin' ? 'every instance' : session.role === 'agent' ? 'the inbox of your instances' : "this instance's key"}>
          {whoIs(session)}
        </span>
        <button type="button" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <main className="page">{content}</main>
    </>
  );
}
