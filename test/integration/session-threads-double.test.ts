import test from 'ava';
import { startDoubleDaemon } from '../protocol-double/harness.js';
import { waitFor } from '../helpers/daemon.js';
import { RemoteConnection } from '../../src/connection/threads/remote-connection.js';

// Issue 26 item 3 (sessions on threads of their own, `baileys.sessionThreads`): real Baileys against
// the protocol double, in session threads of an in-process daemon. The rules: sessions spread over
// the threads; a thread that stops (what a crash does) is replaced, its sessions are reported
// disconnected with the reason and log in again on the new thread with the credentials the daemon
// stored (no new pairing), the other thread's session is untouched, and both send afterwards.

test('a session thread that stops is replaced: its session is reported disconnected, logs in again without a new pairing, and sends; the other is untouched', async (t) => {
  const h = await startDoubleDaemon({ threads: 2, config: { plans: { initialCredits: 100 } } });
  t.teardown(() => h.close());
  const a = await h.pairedInstance();
  const b = await h.pairedInstance();
  const threads = h.sessionThreads!;
  t.true(h.d.core.manager.get(a.id)!.connection instanceof RemoteConnection, 'the daemon holds a remote connection');
  t.deepEqual(threads.threads!(), { running: 2, replaced: 0, connections: [1, 1] }, 'one session on each thread');

  const registrations = h.double.registrations().length;
  const logins = h.double.logins().length;
  const seen = (id: string) => h.observed.get(id)!.flatMap((e) => (e.type === 'status' ? [e.change] : []));
  const before = { a: seen(a.id).length, b: seen(b.id).length };
  await threads.stopThread(0);
  await waitFor(() => threads.threads!().replaced === 1, 5000, 'a new thread');
  await waitFor(() => h.double.logins().length > logins, 15_000, 'a login again');
  await h.waitStatus(a.id, a.key, 'connected');
  await h.waitStatus(b.id, b.key, 'connected');
  t.is(h.double.registrations().length, registrations, 'no new pairing');
  t.is(h.double.logins().length, logins + 1, 'one session logged in again: the one on the thread that stopped');

  const changed = [a, b].filter((x) => seen(x.id).length > before[x.id === a.id ? 'a' : 'b']);
  t.is(changed.length, 1, 'only the stopped thread’s session changed status');
  const changes = seen(changed[0]!.id).slice(changed[0]!.id === a.id ? before.a : before.b);
  t.like(changes[0], { from: 'connected', to: 'disconnected', next: 'retrying' });
  t.regex(changes[0]!.reason ?? '', /session thread stopped/);
  t.is(changes.at(-1)!.to, 'connected');
  t.deepEqual(threads.threads!(), { running: 2, replaced: 1, connections: [1, 1] });

  const ann = await h.double.contact('+15550007201', { name: 'Ann' });
  for (const x of [a, b]) {
    const res = await h.d.request('POST', `/api/${x.id}/send`, { key: x.key, json: { phone: ann.phone, message: `from ${x.id}` } });
    t.is(res.status, 200, JSON.stringify(res.body));
    t.is((await ann.nextMessage()).text, `from ${x.id}`);
  }
  t.deepEqual(h.double.errors, []);
});
