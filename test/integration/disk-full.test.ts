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
  const created = await d.request('POST', '/api/instances/create', { secret, json: { sandbox: true, credits: 5000 } });
  t.is(created.status, 201);
  const id = created.body.instanceId as string;
  const key = created.body.apiKey as string;
  t.is((await d.request('POST', `/api/${id}/sandbox/scan`, { key })).status, 200);
  const first = await d.request('POST', `/api/${id}/send`, { key, json: { phone: '+15551234567', message: 'before' } });
  t.is(first.status, 200);
  t.is(first.body.quotaRemaining, '4999');

  const filler = join(mount, 'filler');
  await fill(filler);
  // Appends that fit in blocks the files already have still succeed (they are stored, so those
  // sends leave and are debited). As the room runs out, a send whose debit no longer fits is answered
  // 503 "was sent ... do not resend" (its debit stays queued); then a send whose reservation cannot
  // be stored is refused before it leaves.
  let ok = 1;
  let sentUndebited = 0;
  let refused: { status: number; body: { error?: { code: string; message: string } } } | null = null;
  const refusedTexts: string[] = [];
  for (let i = 0; i < 2000 && !refused; i++) {
    const res = await d.request('POST', `/api/${id}/send`, { key, json: { phone: '+15551234567', message: `full ${i}` } });
    if (res.status === 200) ok += 1;
    else if (res.status === 503 && /the message was sent/.test(res.body.error?.message ?? '')) sentUndebited += 1;
    else {
      refused = res;
      refusedTexts.push(`full ${i}`);
    }
  }
  t.truthy(refused, `a send was refused once the disk had no room (${ok} ok, ${sentUndebited} sent undebited)`);
  t.is(refused!.status, 503, JSON.stringify(refused!.body));
  t.is(refused!.body.error?.code, 'STORAGE_UNAVAILABLE');
  t.regex(refused!.body.error?.message ?? '', /nothing was sent/);
  // Whatever the disk still takes, each answer tells the truth: 200 (sent, debited), 503 "the
  // message was sent" (sent, debit queued), or 503 "nothing was sent" (and it was not).
  for (let i = 0; i < 20; i++) {
    const text = `still full ${i}`;
    const res = await d.request('POST', `/api/${id}/send`, { key, json: { phone: '+15551234567', message: text } });
    if (res.status === 200) ok += 1;
    else if (res.status === 503 && /the message was sent/.test(res.body.error.message)) sentUndebited += 1;
    else {
      t.is(res.status, 503);
      t.regex(res.body.error.message, /nothing was sent/);
      refusedTexts.push(text);
    }
  }
  const sent = await d.request('GET', `/api/${id}/sandbox/sent`, { key });
  const texts = new Set(sent.body.messages.map((m: { message?: string }) => m.message));
  t.is(sent.body.messages.length, ok + sentUndebited, 'the sends answered 200 or "was sent" left; none of the refused ones');
  t.false(refusedTexts.some((x) => texts.has(x)), 'no refused send left');

  // The ledger probes the disk again every second; sends work again once it takes writes.
  let after = await d.request('POST', `/api/${id}/send`, { key, json: { phone: '+15551234567', message: 'after' } });
  for (let i = 0; i < 50 && after.status === 503; i++) {
    await new Promise((r) => setTimeout(r, 100));
    after = await d.request('POST', `/api/${id}/send`, { key, json: { phone: '+15551234567', message: 'after' } });
  }
  t.is(after.status, 200, JSON.stringify(after.body));
  t.is(Number(after.body.quotaRemaining), 5000 - ok - sentUndebited - 1, 'every message that left is debited once, the refused ones never');
});
