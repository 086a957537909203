/**
 * Guards: the README walk-through runs as written (issue 12: "A newcomer must be able to paste
 * every step in order and see a verified webhook arrive"). The shell block between the
 * walkthrough markers of README.md is run by bash, unchanged, in a scratch directory that links
 * the repository's bin/ and examples/; only PORT and HOOK_PORT are chosen free.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

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

async function walkthrough(): Promise<string> {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  const block = /<!-- walkthrough:start -->\n```sh\n([\s\S]*?)```\n<!-- walkthrough:end -->/.exec(readme);
  if (!block?.[1]) throw new Error('README.md has no walkthrough block');
  return block[1];
}

test('the README walk-through, pasted in order, ends with a verified message.received', async (t) => {
  t.timeout(90_000);
  const script = await walkthrough();
  const dir = await mkdtemp(join(tmpdir(), 'gw-walk-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await symlink(join(ROOT, 'bin'), join(dir, 'bin'));
  await symlink(join(ROOT, 'examples'), join(dir, 'examples'));
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(await freePort()), HOOK_PORT: String(await freePort()) };
  delete env.GATEWAY_DATA_DIR;
  const child = spawn('bash', ['-e', '-c', script], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  t.is(code, 0, out);
  t.regex(out, /verified message\.received from \+15551234567: Hi back/, out);
  t.regex(out, /"success":true,"instanceId":"inst_[A-Za-z0-9_-]+","messageId":"[^"]+","to":"15551234567@s\.whatsapp\.net"/, out);
  t.regex(out, /"chatId":"15551234567@s\.whatsapp\.net"/, out);
  t.notRegex(out, /refused a delivery/, out);
});
