import test from 'ava';
import { join } from 'node:path';
import { InstanceMessages, LAZY_DELAY_MS } from '../../src/storage/files/messages/instance-messages.js';
import { MAX_LAZY_DELAY_MS } from '../../src/storage/files/journal.js';
import { UNGUARDED } from '../../src/fs/write-guard.js';
import { tempDir } from '../helpers/daemon.js';

// Rule (issue "Performance, round 2", item 2): premium sends (nothing to debit, so no durable write
// for their history lines to ride along with) cost far fewer journal writes than sends: their lazy
// lines are coalesced over at most 10 ms, and nothing acknowledged is lost by it.

const LIMITS = { maxPerChat: 10_000, keepMs: 30 * 86_400_000 };

function pending(id: string, at: number) {
  return { k: 'm' as const, messageId: id, chatId: '15550001111@s.whatsapp.net', fromMe: true, sender: null, from: null, type: 'text' as const, status: 'pending' as const, text: `hello ${id}`, timestamp: at, updatedAt: at };
}

test('the delay is bounded by 10 ms', (t) => {
  t.true(LAZY_DELAY_MS > 0 && LAZY_DELAY_MS <= MAX_LAZY_DELAY_MS && MAX_LAZY_DELAY_MS <= 10);
});

test('a burst of 300 premium sends, one per turn of the event loop, is a handful of writes, not 300', async (t) => {
  const file = join(await tempDir(), 'journal.jsonl');
  const now = Date.now();
  const im = await InstanceMessages.open(file, LIMITS, () => undefined, now, UNGUARDED);
  const N = 300;
  for (let i = 0; i < N; i++) {
    // What a premium send does: `pending` before it leaves, `sent` after, neither waited on disk.
    await im.write(pending(`M${i}`, now + i), false);
    await im.write({ k: 's', id: `M${i}`, status: 'sent', at: now + i }, false);
    // The next request comes in a later turn, after the ~100 µs of CPU a request costs the daemon
    // (meanwhile a write handed to the thread pool finishes, so without coalescing each turn wrote).
    for (const until = performance.now() + 0.1; performance.now() < until; );
    await new Promise((r) => setImmediate(r));
  }
  await im.close();
  t.log(`${im.journalWrites} writes`); t.true(im.journalWrites <= N / 10, `${im.journalWrites} writes for ${N} sends`);
  const again = await InstanceMessages.open(file, LIMITS, () => undefined, now, UNGUARDED);
  t.is(again.entries.size, N);
  t.true([...again.entries.allRows()].every((row) => again.entries.status(row) === 'sent'));
  await again.close();
});

test('a durable line ends the wait: it goes out with the lazy lines before it, in one write', async (t) => {
  const file = join(await tempDir(), 'journal.jsonl');
  const now = Date.now();
  const im = await InstanceMessages.open(file, LIMITS, () => undefined, now, UNGUARDED);
  await im.write(pending('L1', now), false);
  await im.write(pending('L2', now), false);
  await im.write(pending('D1', now), true); // resolves once on disk, lazy lines included
  t.is(im.journalWrites, 1);
  const reopened = await InstanceMessages.open(file, LIMITS, () => undefined, now, UNGUARDED);
  t.deepEqual([...reopened.entries.keys()], ['L1', 'L2', 'D1']);
  await reopened.close();
  await im.close();
});

test('reading a message whose line still waits for company does not wait out the delay, and finds it', async (t) => {
  const file = join(await tempDir(), 'journal.jsonl');
  const now = Date.now();
  const im = await InstanceMessages.open(file, LIMITS, () => undefined, now, UNGUARDED);
  await im.write(pending('R1', now), false);
  t.like(await im.message('R1'), { messageId: 'R1', status: 'pending' });
  await im.close();
});
