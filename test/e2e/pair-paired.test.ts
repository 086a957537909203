import test from 'ava';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/daemon.js';

test('standalone pair of an already paired instance exits 0 without connecting', async (t) => {
  const dir = join(await tempDir(), 'data');
  await runCli(['init', '--yes'], { dataDir: dir });
  const c = JSON.parse((await runCli(['instance', 'create', '--json'], { dataDir: dir })).stdout);
  await mkdir(join(dir, 'auth'), { recursive: true });
  // The part of a Baileys credentials file that says "paired".
  await writeFile(join(dir, 'auth', `${c.instanceId}.json`), JSON.stringify({ format: 1, creds: { account: { details: 'x' } }, keys: {} }));
  const r = await runCli(['pair', c.instanceId, '--timeout', '5'], { dataDir: dir });
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /already paired; start the daemon/);
});
