/**
 * Rule (issue 26, idle CPU at thousands of sessions): a WhatsApp socket arms no sweeping timer of
 * its own for the caches the gateway can give it. Baileys makes each socket five NodeCaches when
 * it is given none, each with a 10-minute interval; the gateway gives four (ttl-cache.ts), so one
 * interval per socket is left (Baileys' identity debounce, not configurable). Through the protocol
 * double with real Baileys: an instance pairs (two sockets: the pairing one and the one after the
 * 515 restart), sends a text (Baileys reads the contact's devices through its device cache), and a
 * contact's reply arrives; both ways work with the gateway's caches.
 */
import test from 'ava';
import { createHook } from 'node:async_hooks';
import { DEFAULT_CONNECTION_CONFIG } from '@whiskeysockets/baileys';
import { startDoubleDaemon } from '../protocol-double/harness.js';
import { waitFor } from '../helpers/daemon.js';

// Baileys never clears the timers of queries pending when a socket ends (60 s by default).
DEFAULT_CONNECTION_CONFIG.defaultQueryTimeoutMs = 5000;

test('a paired socket sends and receives with the gateway’s caches, and arms one 10-minute sweep, not five', async (t) => {
  let sweeps = 0;
  const hook = createHook({
    init(_id, type, _trigger, resource) {
      // NodeCache's checkperiod (600 s) interval.
      if (type === 'Timeout' && (resource as { _idleTimeout?: number })._idleTimeout === 600_000) sweeps += 1;
    },
  }).enable();
  const h = await startDoubleDaemon({ config: { sending: { minIntervalMs: 0, jitterMs: 0 } } });
  try {
    const inst = await h.pairedInstance();
    const sockets = () => h.double.sessions.length;
    const alice = await h.double.contact('+15550000301', { name: 'Alice' });
    const sent = await h.d.request('POST', `/api/${inst.id}/send`, { key: inst.key, json: { phone: alice.phone, message: 'hello from the gateway' } });
    t.is(sent.status, 200, JSON.stringify(sent.body));
    const got = await alice.nextMessage();
    t.is(got.text, 'hello from the gateway');
    await alice.sendText(h.double.accountJid(), 'hello back');
    await waitFor(async () => {
      const res = await h.d.request('GET', `/api/${inst.id}/chats/${encodeURIComponent(alice.jid)}/messages`, { key: inst.key });
      return res.status === 200 && JSON.stringify(res.body).includes('hello back');
    }, 10_000, 'the reply in history');
    t.true(sockets() >= 2, `${sockets()} sockets`);
    t.true(sweeps <= sockets(), `${sweeps} ten-minute sweeps for ${sockets()} sockets (Baileys' defaults: five a socket)`);
    t.deepEqual(h.double.errors, []);
  } finally {
    hook.disable();
    await h.close();
  }
});
