/**
 * Guards issue 12, "The daemon starts on a 0755 data dir with 0644 files without a word": at start
 * the daemon makes the data dir private again (directories 0700, files 0600) before it serves.
 */
import test from 'ava';
import { chmod, mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { prepareDataDir, startTestDaemon, tempDir } from '../helpers/daemon.js';

test('a data dir copied with loose modes is made private at start', async (t) => {
  const dataDir = await tempDir('gw-modes-');
  await prepareDataDir(dataDir);
  await mkdir(join(dataDir, 'credits'), { recursive: true });
  await writeFile(join(dataDir, 'credits', 'inst_looseModes01.json'), JSON.stringify({ balance: 3, spent: 0 }));
  await chmod(join(dataDir, 'credits', 'inst_looseModes01.json'), 0o644);
  await chmod(join(dataDir, 'credits'), 0o755);
  await chmod(join(dataDir, 'config.json'), 0o644);
  await chmod(dataDir, 0o755);
  const d = await startTestDaemon({ dataDir });
  t.teardown(() => d.close());
  const mode = async (p: string): Promise<number> => (await stat(p)).mode & 0o777;
  t.is(await mode(dataDir), 0o700);
  t.is(await mode(join(dataDir, 'credits')), 0o700);
  t.is(await mode(join(dataDir, 'config.json')), 0o600);
  t.is(await mode(join(dataDir, 'credits', 'inst_looseModes01.json')), 0o600);
  t.is((await d.request('GET', '/healthz')).status, 200);
});
