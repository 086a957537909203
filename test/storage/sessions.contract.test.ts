/**
 * The panel session port's contract (issue 22/23: the same test on every engine): a stored session
 * is read back whole, activity is kept (at the latest on reading), a principal's sessions are
 * listed, removal and the idle sweep take sessions away. (Reopen: only the PostgreSQL engine keeps
 * sessions across a restart; the files engine signs everyone out, as documented.)
 */
import type { StoredSession } from '../../src/storage/ports/sessions.js';
import { engineTest } from './engines.js';

function session(key: string, principal: string, lastSeen: number): StoredSession {
  return { key, sessionId: `sid-${key}`, csrf: `csrf-${key}`, principal, who: principal === 'admin' ? { role: 'admin' } : { role: 'instance', instanceId: principal.slice(9) }, credentialHash: 'sha256:00', lastSeen };
}

engineTest('sessions: put, get, touch, per principal, remove and sweep', async (t, at) => {
  const s = await at.open();
  await s.sessions.put(session('k1', 'admin', 1_000));
  await s.sessions.put(session('k2', 'instance:inst_abcdefgh', 2_000));
  await s.sessions.put(session('k3', 'instance:inst_abcdefgh', 3_000));
  t.deepEqual(await s.sessions.get('k1'), session('k1', 'admin', 1_000));
  t.is(await s.sessions.get('nope'), null);
  s.sessions.touch('k1', 9_000);
  t.is((await s.sessions.get('k1'))?.lastSeen, 9_000, 'activity is seen when the session is read');
  t.deepEqual((await s.sessions.ofPrincipal('instance:inst_abcdefgh')).map((x) => x.key).sort(), ['k2', 'k3']);
  await s.sessions.remove(['k2']);
  t.deepEqual((await s.sessions.ofPrincipal('instance:inst_abcdefgh')).map((x) => x.key), ['k3']);
  await s.sessions.sweep(5_000);
  t.is(await s.sessions.get('k3'), null, 'idle since before the sweep: gone');
  t.truthy(await s.sessions.get('k1'), 'touched after it: kept');
});
