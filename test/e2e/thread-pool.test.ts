/**
 * Rule (issue 26; bin/gateway's promise): the daemon runs libuv's thread pool at the size the launcher
 * sets, 16 threads unless UV_THREADPOOL_SIZE says otherwise (the store's and the outbox's fsyncs run
 * there). While bin/gateway was an ES module, Node's loader had started the pool at its default of 4
 * before the launcher's first line, and the daemon ran 4 whatever it set: the difference below was 0
 * (checked with the old launcher). Counts the built daemon's threads with and without
 * UV_THREADPOOL_SIZE=4, nothing else different (no instance: no session thread). Linux only (/proc).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startChildDaemon } from '../helpers/child-daemon.js';
import { tempDir } from '../helpers/daemon.js';
import { linuxTest } from '../helpers/linux.js';

async function threadsOfDaemon(env: Record<string, string>): Promise<number> {
  // No preload in NODE_OPTIONS: an ES module preload would start the pool before the launcher runs.
  const d = await startChildDaemon(join(await tempDir(), 'data'), [], { NODE_OPTIONS: '', ...env });
  try {
    return readdirSync(`/proc/${d.child.pid}/task`).length;
  } finally {
    d.kill('SIGTERM');
    await d.exited;
  }
}

linuxTest('the built daemon runs libuv with 16 threads unless UV_THREADPOOL_SIZE says otherwise', async (t) => {
  const byDefault = await threadsOfDaemon({ UV_THREADPOOL_SIZE: '' });
  const four = await threadsOfDaemon({ UV_THREADPOOL_SIZE: '4' });
  t.is(byDefault - four, 12, `threads: ${byDefault} by default, ${four} with UV_THREADPOOL_SIZE=4`);
});
