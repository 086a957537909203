import test from 'ava';
import { DEFAULT_CONNECTION_CONFIG } from '@whiskeysockets/baileys';
import { startDoubleDaemon } from '../protocol-double/harness.js';
import { waitFor } from '../helpers/daemon.js';

// A server that stops answering: Baileys' keepalive ends the socket once nothing arrived for
// keepAliveIntervalMs + 5 s (the 5 s is fixed in Baileys), with 408. The product does not expose
// keepAliveIntervalMs, so this test lowers Baileys' own default (this worker process only); the
// 5 s margin remains, which makes this the slowest double test (about 6 s).
DEFAULT_CONNECTION_CONFIG.keepAliveIntervalMs = 250;
// The daemon sends its pings without a query (keep-socket-alive.ts); Baileys' queries around login
// still arm timeout timers (default 60 s) that it never clears when the socket ends, which would keep
// this worker alive for a minute after the test.
DEFAULT_CONNECTION_CONFIG.defaultQueryTimeoutMs = 2000;

test('a server that stops answering: keepalive gives up (408) and the daemon logs in again', async (t) => {
  const h = await startDoubleDaemon();
  try {
    const { id, key } = await h.pairedInstance();
    const silent = h.double.live();
    t.is(silent.length, 1);
    const logins = h.double.logins().length;
    h.double.stopAnswering();
    // Baileys keeps pinging the silent session meanwhile.
    await waitFor(() => silent[0]!.received.filter((n) => n.attrs.xmlns === 'w:p').length >= 3, 3000, 'unanswered pings');
    await waitFor(() => silent[0]!.closed, 9000, 'the client to give up on the silent server');
    await waitFor(() => h.double.logins().length > logins, 5000, 'a new login');
    await h.waitStatus(id, key, 'connected');
    const reasons = h.observed.get(id)!.flatMap((e) => (e.type === 'status' ? [e.change.reason ?? ''] : []));
    t.true(reasons.some((r) => /408/.test(r)), JSON.stringify(reasons));
  } finally {
    await h.close();
  }
});
