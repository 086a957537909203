import test from 'ava';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { startChildDaemon } from '../helpers/child-daemon.js';
import { request, tempDir } from '../helpers/daemon.js';

/**
 * Rule (issue 26, premium sends): a send with nothing to debit answers 200 once its `sent` status
 * is on disk (written in groups, so the answers of a burst leave together). Sends flow on 20
 * connections to a premium instance, the daemon is killed with SIGKILL, and after a
 * restart every message that got a 200 reads back `sent`.
 */
test('kill -9 while premium sends flow: every message that got a 200 is stored as sent', async (t) => {
  const dir = join(await tempDir(), 'data');
  await runCli(['init', '--yes', '--json'], { dataDir: dir });
  const inst = JSON.parse((await runCli(['instance', 'create', '--owner', 'premium-buyer', '--sandbox', '--premium-days', '30', '--json'], { dataDir: dir })).stdout);
  t.true(inst.premium, 'premium: nothing to debit');
  const d = await startChildDaemon(dir);
  await request(d.url, 'POST', `/api/${inst.instanceId}/sandbox/scan`, { key: inst.apiKey });
  const answered: string[] = [];
  let stop = false;
  const worker = async (k: number): Promise<void> => {
    for (let i = 0; !stop; i++) {
      try {
        const res = await request(d.url, 'POST', `/api/${inst.instanceId}/send`, { key: inst.apiKey, json: { phone: `+1555123${String(4000 + k)}`, message: `m${i}` } });
        if (res.status === 200) answered.push(res.body.messageId as string);
      } catch {
        return; // the daemon died mid-request: no 200 for this one
      }
    }
  };
  const workers = Array.from({ length: 20 }, (_, k) => worker(k));
  const until = Date.now() + 10_000;
  while (answered.length < 200 && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
  d.kill('SIGKILL');
  stop = true;
  await Promise.all(workers);
  await d.exited;
  t.true(answered.length >= 200, `${answered.length} sends answered before the kill`);

  const again = await startChildDaemon(dir);
  try {
    const notSent: string[] = [];
    for (const id of answered) {
      const res = await request(again.url, 'GET', `/api/${inst.instanceId}/messages/${id}`, { key: inst.apiKey });
      if (res.status !== 200 || res.body.status !== 'sent') notSent.push(`${id}: ${res.status} ${String(res.body.status ?? res.body.error?.code)}`);
    }
    t.deepEqual(notSent.slice(0, 5), [], `${notSent.length} of ${answered.length} answered messages are not stored as sent`);
  } finally {
    again.kill('SIGTERM');
    await again.exited;
  }
});
