/**
 * What the files engine's message index costs in memory a kept message: one instance's journal
 * filled the way the send bench fills it (sends to 1,000 chats, `pending` then `sent`, up to
 * history.maxMessagesPerChat = 200 kept per chat, so 200,000 kept and older ones evicted), then
 * the heap after a full collection, against the heap before.
 *
 *   node --expose-gc --import=tsx bench/index-memory.ts [messages]
 *
 * Prints `index_bytes_per_message` (heap growth / kept messages) and the kept count. Not part of
 * `npm run bench`: it explains `rss_mb_10k`, whose busy instance holds this index.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UNGUARDED } from '../src/fs/write-guard.js';
import { newMessageId } from '../src/domain/ids.js';
import { InstanceMessages } from '../src/storage/files/messages/instance-messages.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const TOTAL = Number(process.argv[2] ?? 220_000);
const CHATS = 1_000;

const dir = await mkdtemp(join(tmpdir(), 'gw-index-'));
try {
  const now = Date.now();
  const im = await InstanceMessages.open(join(dir, 'journal.jsonl'), { maxPerChat: 200, keepMs: 30 * 86_400_000 }, () => undefined, now, UNGUARDED);
  await im.close();
  gc();
  const before = process.memoryUsage().heapUsed;
  const live = await InstanceMessages.open(join(dir, 'journal.jsonl'), { maxPerChat: 200, keepMs: 30 * 86_400_000 }, () => undefined, now, UNGUARDED);
  for (let i = 0; i < TOTAL; i++) {
    // Each send brings strings of its own (parsed from its request), as in the daemon.
    const chatId = `1555${String(i % CHATS).padStart(7, '0')}@s.whatsapp.net`.split('').join('');
    const id = newMessageId();
    const at = now + i;
    void live.write({ k: 'm', messageId: id, chatId, fromMe: true, sender: null, from: null, type: 'text', status: 'pending', text: 'bench', timestamp: at, updatedAt: at }, false);
    void live.write({ k: 's', id, status: 'sent', at: at + 1 }, false);
    if (i % 1_000 === 999) await new Promise((r) => setImmediate(r));
  }
  await new Promise((r) => setTimeout(r, 50));
  gc();
  const after = process.memoryUsage().heapUsed;
  const kept = live.entries.size;
  console.log(JSON.stringify({ index_bytes_per_message: Math.round((after - before) / kept), kept, heap_mib: Math.round(((after - before) / 1_048_576) * 10) / 10 }));
  await live.close();
} finally {
  await rm(dir, { recursive: true, force: true });
}
