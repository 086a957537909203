/**
 * Guards issue 12, "With the disk full, sends went out and were answered 500 without a debit": a
 * send must not leave when its credit reservation cannot be stored; it is answered 503
 * STORAGE_UNAVAILABLE before sending, the balance is untouched, and sends work again once there
 * is room. The data dir lives on a real 4 MiB tmpfs filled to the last byte (needs root to mount;
 * CI runs as root).
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { open, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { prepareDataDir, startTestDaemon, tempDir } from '../helpers/daemon.js';

function mountTmpfs(dir: string): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m,mode=0700', 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

async function fill(file: string): Promise<void> {
  const fh = await open(file, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) await fh.write(chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  }
  // the last bytes, smaller than a chunk
  try {
    for (;;) await fh.write(Buffer.alloc(512, 1));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    await fh.close();
  }
}

test('a full disk refuses the send with 503 STORAGE_UNAVAILABLE before it leaves, and charges nothing', async (t) => {
  const mount = await tempDir('gw-full-');
  if (!mountTmpfs(mount)) {
    await rmdir(mount);
    t.log('cannot mount a tmpfs here (not root?): skipped');
    t.pass();
    return;
  }
  t.teardown(async () => {
    try {
      execFileSync('umount', ['-l', mount], { stdio: 'ignore' });
    } catch {
      // already gone
    }
    await rm(mount, { recursive: true, force: true });
  });
  const dataDir = join(mount, 'data');
  const secret = await prepareDataDir(dataDir, { plans: { trialDays: 0 } });
  const d = await startTestDaemon({ dataDir });
  t.teardown(() => d.close());
  const created = await d.request('POST', '/api/instances/create', { secret, json: { sandbox: true, credits: 5 } });
  t.is(created.status, 201);
  const id = created.body.instanceId as string;
  const key = created.body.apiKey as string;
  t.is((await d.request('POST', `/api/${id}/sandbox/scan`, { key })).status, 200);
  const first = await d.request('POST', `/api/${id}/send`, { key, json: { phone: '+15551234567', message: 'before' } });
  t.is(first.status, 200);
  t.is(first.body.quotaRemaining, '4');

  const filler = join(mount, 'filler');
  await fill(filler);
  for (let i = 0; i < 3; i++) {
    const res = await d.request('POST', `/api/${id}/send`, { key, json: { phone: '+15551234567', message: `full ${i}` } });
    t.is(res.status, 503, JSON.stringify(res.body));
    t.is(res.body.error.code, 'STORAGE_UNAVAILABLE');
    t.regex(res.body.error.message, /nothing was sent|not sent|nothing was changed/);
  }
  const sent = await d.request('GET', `/api/${id}/sandbox/sent`, { key });
  t.deepEqual(
    sent.body.messages.map((m: { message?: string }) => m.message),
    ['before'],
    'no message left while the disk was full',
  );
  t.is((await d.request('GET', `/api/${id}/status`, { key })).body.quotaRemaining, '4', 'no credit spent or lost');

  await rm(filler);
  const after = await d.request('POST', `/api/${id}/send`, { key, json: { phone: '+15551234567', message: 'after' } });
  t.is(after.status, 200, JSON.stringify(after.body));
  t.is(after.body.quotaRemaining, '3');
});
