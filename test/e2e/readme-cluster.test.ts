/**
 * Guards issue 23 item 7: the README's three-node walk-through ("Several hosts") runs as written.
 * The shell block between the cluster markers of README.md is run by bash, unchanged, in a scratch
 * directory that links the repository's bin/; only DATABASE_URL (a fresh database) and the three
 * ports are chosen.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freshDatabase } from '../helpers/postgres.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

test('the README three-node walk-through, pasted in order: a send through any node, and the instance connected elsewhere after its node is killed', async (t) => {
  t.timeout(120_000);
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  const script = /<!-- cluster:start -->\n```sh\n([\s\S]*?)```\n<!-- cluster:end -->/.exec(readme)?.[1];
  if (!script) throw new Error('README.md has no cluster block');
  const db = await freshDatabase();
  const dir = await mkdtemp(join(tmpdir(), 'gw-readme-cluster-'));
  t.teardown(async () => {
    await rm(dir, { recursive: true, force: true });
    await db.drop();
  });
  await symlink(join(ROOT, 'bin'), join(dir, 'bin'));
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: db.url, P1: String(await freePort()), P2: String(await freePort()), P3: String(await freePort()) };
  delete env.GATEWAY_DATA_DIR;
  delete env.GATEWAY_DATABASE_URL;
  const child = spawn('bash', ['-e', '-c', script], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  t.is(code, 0, out);
  t.regex(out, /\{"nodes":\[(\{"nodeId":"node\d".*?\},?){3}\]\}/, out);
  t.regex(out, /"success":true,"instanceId":"inst_[A-Za-z0-9_-]+","messageId":"[^"]+","to":"15551234567@s\.whatsapp\.net","quotaRemaining":"9"/, out);
  t.regex(out, /"quotaRemaining":"8"/, 'the send after the failover, through another node, debited once');
});
