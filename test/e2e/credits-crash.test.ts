import test from 'ava';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { startChildDaemon } from '../helpers/child-daemon.js';
import { readCredits } from '../helpers/credits.js';
import { request, tempDir } from '../helpers/daemon.js';

/**
 * Sends as fast as 20 connections allow, kills the daemon with SIGKILL in the middle, and checks
 * the credit file: every send that got a 200 was debited on disk, and nothing went negative.
 */
for (const killAfterMs of [0, 60, 250]) {
  test(`kill -9 after ${killAfterMs} ms of sending never leaves a 200 undebited`, async (t) => {
    const dir = join(await tempDir(), 'data');
    const init = JSON.parse((await runCli(['init', '--yes', '--json'], { dataDir: dir })).stdout);
    await runCli(['instance', 'create', '--owner', 'trial-taker', '--sandbox'], { dataDir: dir });
    const initial = 5000;
    const inst = JSON.parse((await runCli(['instance', 'create', '--owner', 'trial-taker', '--sandbox', '--credits', String(initial), '--json'], { dataDir: dir })).stdout);
    t.false(inst.premium);
    const d = await startChildDaemon(dir);
    await request(d.url, 'POST', `/api/${inst.instanceId}/sandbox/scan`, { key: inst.apiKey });
    void init;

    let ok = 0;
    let stop = false;
    const worker = async (): Promise<void> => {
      while (!stop) {
        try {
          const res = await request(d.url, 'POST', `/api/${inst.instanceId}/send`, { key: inst.apiKey, json: { phone: '+15551234567', message: 'x' } });
          if (res.status === 200) ok += 1;
        } catch {
          return; // the daemon died mid-request: no 200 for this one
        }
      }
    };
    const workers = Array.from({ length: 20 }, worker);
    // The kill lands `killAfterMs` after sends are flowing (a loaded machine may start slowly).
    const until = Date.now() + 10_000;
    while (ok === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, killAfterMs));
    d.kill('SIGKILL');
    stop = true;
    await Promise.all(workers);
    await d.exited;

    const disk = await readCredits(dir, inst.instanceId);
    t.log(`${ok} sends answered 200 before the kill; balance on disk ${disk.balance}`);
    t.true(ok > 0, 'some sends went through before the kill');
    t.true(disk.balance >= 0);
    t.true(disk.balance <= initial - ok, 'every 200 was debited durably before it was sent');
    t.is(disk.balance + disk.spent, initial, 'no credit appears or vanishes');
    // At most the sends in flight at the kill (20 connections) were made but not debited.
    t.true(initial - ok - disk.balance <= 20);

    // and the daemon comes back with the same balance
    const again = await startChildDaemon(dir);
    const status = await request(again.url, 'GET', `/api/${inst.instanceId}/status`, { key: inst.apiKey });
    t.is(status.body.quotaRemaining, String(disk.balance));
    again.kill('SIGTERM');
    await again.exited;
  });
}
