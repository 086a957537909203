/**
 * Rule (issue 26, `cli_create_ms`, item 4): on Node >= 22.1 bin/gateway keeps the bundle's compiled
 * code in dist/compile-cache, next to the bundle, and a second run uses it; on Node 20 (no such
 * cache) nothing is written and the CLI runs as before. NODE_DISABLE_COMPILE_CACHE=1 turns it off.
 * The launcher runs from a copy of the install's layout (bin/ and dist/bundle) in a temp dir, so the
 * cache it writes is this test's own.
 */
import test from 'ava';
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import module from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

async function install(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-compile-cache-'));
  await mkdir(join(dir, 'bin'));
  await mkdir(join(dir, 'dist'));
  await copyFile(join(ROOT, 'bin/gateway'), join(dir, 'bin/gateway'));
  await copyFile(join(ROOT, 'bin/package.json'), join(dir, 'bin/package.json'));
  await symlink(join(ROOT, 'dist/bundle'), join(dir, 'dist/bundle'));
  await symlink(join(ROOT, 'package.json'), join(dir, 'package.json'));
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

async function files(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => e.name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

test('the CLI keeps its compiled code next to the bundle where Node can, and runs the same either way', async (t) => {
  const dir = await install();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const cache = join(dir, 'dist/compile-cache');
  const version = async (env: NodeJS.ProcessEnv = {}) => (await run(process.execPath, [join(dir, 'bin/gateway'), '--version'], { env: { ...process.env, ...env } })).stdout;

  const off = await version({ NODE_DISABLE_COMPILE_CACHE: '1' });
  t.regex(off, /^\d+\.\d+\.\d+\n$/);
  t.deepEqual(await files(cache), [], 'nothing written when turned off');

  t.is(await version(), off);
  const written = await files(cache);
  // @types/node is Node 20's, which has no enableCompileCache.
  if (typeof (module as { enableCompileCache?: unknown }).enableCompileCache !== 'function') {
    t.deepEqual(written, [], `Node ${process.version} has no compile cache: nothing written`);
    return;
  }
  t.true(written.length >= 2, `the bundle's chunks are cached (${written.length} files)`);
  t.is(await version(), off, 'the second run, from the cache, says the same');
});
