/**
 * Guards issue 12: "`gateway init --force` while the daemon runs: the old server secret kept working
 * and the new one was refused until restart; it also reset `allowPrivateTargets`". With a daemon
 * running, --force issues a new secret that the daemon honours at once (the old one is refused) and
 * keeps every other setting.
 */
import test from 'ava';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { startChildDaemon } from '../helpers/child-daemon.js';
import { request, tempDir } from '../helpers/daemon.js';

test('init --force with a running daemon: the new secret works at once, the old is refused, settings kept', async (t) => {
  const dir = join(await tempDir(), 'data');
  const first = await runCli(['init', '--yes', '--allow-private-webhooks', '--json'], { dataDir: dir });
  t.is(first.code, 0, first.stderr);
  const oldSecret = (JSON.parse(first.stdout) as { serverSecret: string }).serverSecret;
  const before = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8')) as Record<string, unknown> & { webhooks: { allowPrivateTargets: boolean } };
  const d = await startChildDaemon(dir);
  try {
    t.is((await request(d.url, 'GET', '/api/instances', { secret: oldSecret })).status, 200);
    const forced = await runCli(['init', '--force', '--json'], { dataDir: dir });
    t.is(forced.code, 0, forced.stderr);
    const newSecret = (JSON.parse(forced.stdout) as { serverSecret: string }).serverSecret;
    t.not(newSecret, oldSecret);
    // No wait: the daemon made the change itself.
    t.is((await request(d.url, 'GET', '/api/instances', { secret: newSecret })).status, 200);
    t.is((await request(d.url, 'GET', '/api/instances', { secret: oldSecret })).status, 401);
    const after = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8')) as typeof before;
    t.true(after.webhooks.allowPrivateTargets, 'allowPrivateTargets kept');
    t.deepEqual({ ...after, serverSecretHash: null }, { ...before, serverSecretHash: null }, 'every other setting kept');
    t.not(after.serverSecretHash, before.serverSecretHash);
  } finally {
    d.kill('SIGTERM');
    t.is(await d.exited, 0);
  }
});
