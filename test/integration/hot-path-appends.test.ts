import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import test from 'ava';
import { startTestDaemon, waitFor } from '../helpers/daemon.js';
import { inbound, outbox, setWebhook, startReceiver } from '../helpers/receiver.js';

interface FileState {
  ino: number;
  bytes: Buffer;
}

async function files(root: string, dir = root, into = new Map<string, FileState>()): Promise<Map<string, FileState>> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await files(root, path, into);
    else if (entry.isFile()) into.set(relative(root, path), { ino: (await stat(path)).ino, bytes: await readFile(path) });
  }
  return into;
}

// Rule (issue 17, contract part 2): the history, credit and webhook stores stay off the hot path.
// A send and an inbound event append to journals; no file the daemon holds is rewritten whole
// (same inode, its earlier bytes unchanged) while the journals are below their compaction sizes.
test('sends and inbound events only append: every stored file keeps its inode and its earlier bytes', async (t) => {
  const receiver = await startReceiver();
  const d = await startTestDaemon();
  try {
    // The owner's first instance takes the free trial (premium: nothing to debit); the second pays.
    await d.connectedSandbox({ owner: 'acme' });
    const inst = await d.connectedSandbox({ owner: 'acme', credits: 1000 });
    await setWebhook(d, inst, receiver.url, { events: null });
    const send = async (i: number) => {
      const res = await d.request('POST', `/api/${inst.id}/send`, { key: inst.key, json: { phone: '+15551230000', message: `out ${i}` } });
      t.is(res.status, 200, JSON.stringify(res.body));
      t.is(res.body.quotaRemaining, String(1000 - i - 1), 'a debited send');
    };
    // Every store gets its files first (the first send creates the credit and message journals).
    await send(0);
    await inbound(d, inst, '+15551230000', 'in 0');
    const settled = () => waitFor(async () => (await outbox(d.dataDir, inst.id)).every((r) => r.status === 'delivered') || undefined, 10_000, 'deliveries delivered');
    await settled();
    const before = await files(d.dataDir);

    for (let i = 1; i <= 40; i++) {
      await send(i);
      await inbound(d, inst, `+1555123000${i % 4}`, `in ${i}`);
    }
    await settled();
    const after = await files(d.dataDir);

    const appendedTo: string[] = [];
    for (const [path, old] of before) {
      const now = after.get(path);
      if (!now) {
        t.fail(`${path} was removed`);
        continue;
      }
      t.is(now.ino, old.ino, `${path} was replaced (a full rewrite)`);
      t.true(now.bytes.subarray(0, old.bytes.length).equals(old.bytes), `${path}: its earlier bytes changed`);
      if (now.bytes.length > old.bytes.length) appendedTo.push(path);
    }
    t.log(`appended to: ${appendedTo.join(', ')}`);
    // The three journals a send and an inbound event write did grow (the rule is not vacuous).
    for (const store of ['credits', 'messages', 'outbox']) {
      t.true(appendedTo.some((p) => p.startsWith(`${store}/`)), `a ${store} journal was appended to (${appendedTo.join(', ')})`);
    }
  } finally {
    await d.close();
    await receiver.close();
  }
});
