import test from 'ava';
import { startGatewayOnDouble } from '../protocol-double/child.js';
import { waitFor } from '../helpers/daemon.js';
import { LIBSIGNAL_ROUTINE, LIBSIGNAL_TROUBLE } from '../../src/connection/baileys/libsignal-console.js';

// Rule guarded: no secrets in logs. libsignal prints whole Signal session records (the ratchet's
// private key, root key and chain keys) with console.info when a session gives way to a newer one,
// which Baileys makes routine. The BUILT daemon (child process, build first), real Baileys against
// the protocol double, logging at debug: libsignal's line is in the gateway's log as a JSON line
// with its message only, and nothing of a session record reaches stdout or stderr.

test('libsignal closing a session logs one JSON line without the session record', async (t) => {
  const gw = await startGatewayOnDouble({ config: { logLevel: 'debug' } });
  try {
    const ana = await gw.double.contact('+15550000121', { name: 'Ana' });
    // A reply from the contact, then one from the gateway: Baileys refreshes the contact's (and the
    // phone's) sessions on the way, and libsignal closes the older ones.
    await ana.sendText(gw.double.lastDevice()!.jid, 'hello gateway');
    await gw.waitEvent('message.received', (e) => (e.data as { text?: string }).text === 'hello gateway');
    const res = await gw.api('POST', '/send', { json: { phone: ana.phone, message: 'hello Ana' } });
    t.is(res.status, 200, JSON.stringify(res.body));
    await ana.nextMessage();

    const lines = await waitFor(
      () => {
        const found = gw.daemon.stdout().split('\n').filter((l) => l.includes('"component":"libsignal"'));
        return found.length > 0 ? found : null;
      },
      10_000,
      'a libsignal line in the log',
    );
    for (const line of lines) {
      const parsed = JSON.parse(line) as { msg: string };
      t.true([...LIBSIGNAL_ROUTINE, ...LIBSIGNAL_TROUBLE].some((p) => parsed.msg.startsWith(p)), parsed.msg);
      t.true(parsed.msg.length <= 200);
    }
    const all = `${gw.daemon.stdout()}\n${gw.daemon.stderr()}`;
    for (const secret of ['privKey', 'rootKey', 'chainKey', 'SessionEntry', '<Buffer']) t.false(all.includes(secret), `${secret} is not in the output`);
  } finally {
    await gw.close();
  }
});
