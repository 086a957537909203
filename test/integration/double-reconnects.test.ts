import test from 'ava';
import { enabledAsyncStorages } from '../../src/connection/baileys/shared-async-storage.js';
import type { BaileysConnection } from '../../src/connection/baileys/connection.js';
import { waitFor } from '../helpers/daemon.js';
import { startDoubleDaemon, type DoubleDaemon } from '../protocol-double/harness.js';
import type { Session } from '../protocol-double/server.js';

// What reconnects leave behind, through the in-process daemon and real Baileys on the double:
// Baileys' per-socket AsyncLocalStorage (never disabled upstream), queries left waiting by end(),
// and logins in flight at once after a restart or a dropped network.

/** Drops every connection and waits until the instances are connected again through new logins. */
async function dropAndReconnect(h: DoubleDaemon, instances: Array<{ id: string; key: string }>): Promise<void> {
  const before = h.double.logins().length;
  h.double.drop();
  await waitFor(() => h.double.logins().length >= before + instances.length || undefined, 15_000, 'new logins');
  for (const { id, key } of instances) await h.waitStatus(id, key, 'connected');
}

/** Most logins (connect to `<success/>`) in flight at once among these sessions. */
function maxConcurrentLogins(sessions: Session[]): number {
  const edges = sessions.filter((s) => s.kind === 'login').flatMap((s): Array<[number, number]> => [[s.startedAt, 1], [s.succeededAt ?? s.closedAt ?? Date.now(), -1]]);
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let max = 0;
  for (const [, d] of edges) max = Math.max(max, (now += d));
  return max;
}

test.serial('reconnects and restarts leave no AsyncLocalStorage behind (Baileys enables one per socket and never disables it)', async (t) => {
  const h = await startDoubleDaemon();
  t.teardown(() => h.close());
  const inst = await h.pairedInstance();
  const base = enabledAsyncStorages();
  for (let round = 0; round < 5; round++) await dropAndReconnect(h, [inst]);
  t.is(enabledAsyncStorages(), base, 'one more per reconnect before the fix');
  await h.restart();
  await h.waitStatus(inst.id, inst.key, 'connected');
  await dropAndReconnect(h, [inst]);
  t.is(enabledAsyncStorages(), base);
});

test.serial('stopping a connection answers its pending queries at once instead of leaving them for the 60 s timeout', async (t) => {
  const h = await startDoubleDaemon();
  t.teardown(() => h.close());
  const inst = await h.pairedInstance();
  const connection = h.d.core.manager.get(inst.id)!.connection as BaileysConnection;
  h.double.stopAnswering();
  const started = Date.now();
  const pending = connection.groups().then(
    () => 'answered',
    () => 'failed',
  );
  await new Promise((r) => setTimeout(r, 200)); // the query is on the wire, unanswered
  await connection.stop();
  const outcome = await Promise.race([pending, new Promise((r) => setTimeout(() => r('still waiting'), 10_000))]);
  t.not(outcome, 'still waiting');
  t.true(Date.now() - started < 10_000);
});

// With session threads too: the login gate is the daemon's, and each thread asks it across the port.
for (const threads of [0, 2]) {
test.serial(`logins are staggered: at most baileys.maxConcurrentLogins in flight after a restart and after the network drops${threads ? `, sessions on ${threads} threads` : ''}`, async (t) => {
  const h = await startDoubleDaemon({ config: { baileys: { maxConcurrentLogins: 2 } }, threads });
  t.teardown(() => h.close());
  const instances: Array<{ id: string; key: string }> = [];
  for (let i = 0; i < 6; i++) {
    // Each instance is its own account (its own phone number), as real ones are.
    const { id, key } = await h.createInstance();
    await h.waitStatus(id, key, 'qr_code_generated');
    const qr = (await h.qrCode(id, key)).body.qr as string;
    const device = await h.double.scan(qr, { phone: `1555010000${i}` });
    await h.waitStatus(id, key, 'connected');
    await h.double.synced(device);
    instances.push({ id, key });
  }

  let from = h.double.sessions.length;
  await h.restart();
  for (const { id, key } of instances) await h.waitStatus(id, key, 'connected', { ms: 30_000 });
  const afterRestart = maxConcurrentLogins(h.double.sessions.slice(from));
  t.true(afterRestart <= 2, `${afterRestart} logins at once after the restart`);

  from = h.double.sessions.length;
  await dropAndReconnect(h, instances);
  const afterDrop = maxConcurrentLogins(h.double.sessions.slice(from));
  t.true(afterDrop <= 2, `${afterDrop} logins at once after the drop`);
  t.true(afterDrop >= 1);
  t.deepEqual(h.double.errors, []);
});
}
