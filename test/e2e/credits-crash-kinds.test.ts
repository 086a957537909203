/**
 * Guards issue 15, "Credits: the sends in the table cost one credit each, exactly as text (reserve,
 * send, debit, release on failure, exact across kill -9); reactions, edits, deletes, read marks,
 * presence, checks and reads are free". Every send kind runs at once from 20 connections together
 * with free actions; the daemon is killed with SIGKILL mid-stream; on disk every 200 of a paid kind
 * is debited, free actions cost nothing, and no credit appears or vanishes.
 */
import test from 'ava';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { startChildDaemon } from '../helpers/child-daemon.js';
import { readCredits } from '../helpers/credits.js';
import { request, tempDir } from '../helpers/daemon.js';

const PAID: Array<{ path: string; body: Record<string, unknown> }> = [
  { path: 'send', body: { phone: '+15551234567', message: 'x' } },
  { path: 'send-location', body: { phone: '+15551234567', latitude: 52.52, longitude: 13.405, name: 'Berlin' } },
  { path: 'send-contact', body: { to: '15551234567@s.whatsapp.net', contacts: [{ name: 'Ann', phone: '+15557654321' }] } },
  { path: 'send-poll', body: { phone: '+15551234567', question: 'Lunch?', options: ['yes', 'no'] } },
];

test('kill -9 while every send kind and free actions run: each paid 200 debited, free actions free', async (t) => {
  const dir = join(await tempDir(), 'data');
  t.is((await runCli(['init', '--yes', '--json'], { dataDir: dir })).code, 0);
  await runCli(['instance', 'create', '--owner', 'kinds', '--sandbox'], { dataDir: dir }); // takes the owner's trial
  const initial = 5000;
  const inst = JSON.parse((await runCli(['instance', 'create', '--owner', 'kinds', '--sandbox', '--credits', String(initial), '--json'], { dataDir: dir })).stdout) as { instanceId: string; apiKey: string; premium: boolean };
  t.false(inst.premium);
  const d = await startChildDaemon(dir);
  const key = inst.apiKey;
  const id = inst.instanceId;
  await request(d.url, 'POST', `/api/${id}/sandbox/scan`, { key });
  const first = await request(d.url, 'POST', `/api/${id}/send`, { key, json: { phone: '+15551234567', message: 'target' } });
  t.is(first.status, 200);
  const target = first.body.messageId as string;

  let paidOk = 1;
  let freeOk = 0;
  let stop = false;
  const worker = async (n: number): Promise<void> => {
    for (let i = n; !stop; i++) {
      try {
        if (i % 5 === 4) {
          const free = i % 2 === 0
            ? await request(d.url, 'POST', `/api/${id}/react`, { key, json: { chatId: '15551234567@s.whatsapp.net', messageId: target, emoji: '👍' } })
            : await request(d.url, 'POST', `/api/${id}/presence`, { key, json: { chatId: '15551234567@s.whatsapp.net', state: 'typing' } });
          if (free.status === 200) freeOk += 1;
          continue;
        }
        const kind = PAID[i % PAID.length]!;
        const res = await request(d.url, 'POST', `/api/${id}/${kind.path}`, { key, json: kind.body });
        if (res.status === 200) paidOk += 1;
      } catch {
        return; // the daemon died mid-request: no 200 for this one
      }
    }
  };
  const workers = Array.from({ length: 20 }, (_, n) => worker(n));
  const until = Date.now() + 10_000;
  while ((paidOk < 50 || freeOk < 5) && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
  d.kill('SIGKILL');
  stop = true;
  await Promise.all(workers);
  await d.exited;

  const disk = await readCredits(dir, id);
  t.log(`${paidOk} paid sends and ${freeOk} free actions answered 200 before the kill; balance on disk ${disk.balance}`);
  t.true(freeOk > 0, 'free actions ran');
  t.true(disk.balance <= initial - paidOk, 'every paid 200 was debited durably');
  t.true(initial - paidOk - disk.balance <= 20, 'at most the sends in flight at the kill were made but not debited; free actions cost nothing');
  t.is(disk.balance + disk.spent, initial, 'no credit appears or vanishes');

  const again = await startChildDaemon(dir);
  const status = await request(again.url, 'GET', `/api/${id}/status`, { key });
  t.is(status.body.quotaRemaining, String(disk.balance));
  again.kill('SIGTERM');
  await again.exited;
});
