import test from 'ava';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/daemon.js';

test('delete with no daemon tries to log the device out, then removes the credentials and says so', async (t) => {
  const dir = join(await tempDir(), 'data');
  await runCli(['init', '--yes'], { dataDir: dir });
  // WhatsApp is "unreachable": a local port that hangs up at once.
  const server = createServer((s) => s.destroy());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const configFile = join(dir, 'config.json');
  const config = JSON.parse(await readFile(configFile, 'utf8'));
  config.baileys.webSocketUrl = `ws://127.0.0.1:${port}/ws/chat`;
  await writeFile(configFile, JSON.stringify(config));
  const c = JSON.parse((await runCli(['instance', 'create', '--json'], { dataDir: dir })).stdout);
  const auth = join(dir, 'auth', `${c.instanceId}.json`);
  await mkdir(join(dir, 'auth'), { recursive: true });
  await writeFile(auth, JSON.stringify({ format: 1, creds: { account: { details: 'x' } }, keys: {} }));
  try {
    const r = await runCli(['instance', 'delete', c.instanceId, '--yes', '--logout-timeout', '2', '--json'], { dataDir: dir });
    t.is(r.code, 0, r.stderr);
    t.like(JSON.parse(r.stdout), { instanceId: c.instanceId, deleted: true, loggedOut: false });
    t.regex(r.stderr, /could not reach WhatsApp to log .* out; its credentials are deleted/);
    await t.throwsAsync(stat(auth));
    t.is((await runCli(['instance', 'show', c.instanceId], { dataDir: dir })).code, 4);
  } finally {
    server.close();
  }
});
