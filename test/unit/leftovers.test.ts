import test from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { tempPath } from '../../src/fs/atomic-write.js';
import { Journal } from '../../src/storage/files/journal.js';
import { lockDataDir, unlockDataDir } from '../../src/storage/files/data-dir-lock.js';
import { removeDataDirLeftovers, removeLeftovers } from '../../src/storage/files/leftovers.js';
import { storePaths } from '../../src/storage/files/paths.js';
import { acquireLock } from '../../src/storage/files/owner-lock.js';
import { tempDir } from '../helpers/daemon.js';
import { UNGUARDED } from '../../src/fs/write-guard.js';

// Rule guarded: temp files of atomic writes whose writer died are removed; a live process's temp
// file never is, even when its pid is our own.

const temp = (name: string, pid: number) => `.${name}.${pid}.${Math.floor(Math.random() * 0xffffffff).toString(16)}.tmp`;
const hourAgo = () => new Date(Date.now() - 3_600_000);

test('temp files and lock scratch dirs of dead writers go; live writers\' and foreign names stay', async (t) => {
  const dir = await tempDir('gw-leftovers-');
  const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
  const live = spawn('sleep', ['60'], { stdio: 'ignore' });
  t.teardown(() => void live.kill('SIGKILL'));

  const deadFile = temp('credits.json', dead);
  const deadDir = temp('credits.lock', dead);
  const liveFile = temp('credits.json', live.pid!);
  const ownFresh = temp('instances.json', process.pid);
  const ownOld = temp('instances.json', process.pid); // same pid, from before a restart (containers)
  const reused = temp('flow.json', live.pid!); // older than the process that now has the pid
  for (const name of [deadFile, liveFile, ownFresh, ownOld, reused]) writeFileSync(join(dir, name), '{');
  mkdirSync(join(dir, deadDir));
  writeFileSync(join(dir, deadDir, 'owner.json'), '{}');
  utimesSync(join(dir, ownOld), hourAgo(), hourAgo());
  utimesSync(join(dir, reused), hourAgo(), hourAgo());
  const foreign = ['credits.json', '.credits.json.tmp', '.x.abc.def.tmp', 'notes.12.ab.tmp'];
  for (const name of foreign) writeFileSync(join(dir, name), '');

  // By default nothing younger than 30 s goes: its writer may be in another pid namespace.
  t.deepEqual((await removeLeftovers(dir)).sort(), [ownOld, reused].sort());
  t.deepEqual((await removeLeftovers(dir, { minAgeMs: 0 })).sort(), [deadFile, deadDir].sort());
  t.deepEqual(readdirSync(dir).sort(), [...foreign, liveFile, ownFresh].sort());
});

test('a held lock and its scratch names are left alone; a missing dir is nothing to do', async (t) => {
  const dir = await tempDir('gw-leftovers-');
  const lock = await acquireLock(join(dir, 'x.lock'), { kind: 'store' });
  t.deepEqual(await removeLeftovers(dir, { minAgeMs: 0 }), []);
  t.deepEqual(readdirSync(dir), ['x.lock']);
  await lock.release();
  t.deepEqual(await removeLeftovers(join(dir, 'missing')), []);
});

// Serial: the other tests of this file write thousands of files synchronously, which held this
// one's polling loop past the whole write (CI, once: the write finished unseen, and waiting for an
// exit that had already happened never ended).
test.serial('the temp file of a real atomic write killed half-way is recognised and removed', async (t) => {
  const dir = await tempDir('gw-leftovers-');
  const writer = spawn(
    process.execPath,
    ['--import', 'tsx', '-e', `import('${new URL('../../src/fs/atomic-write.ts', import.meta.url).pathname}').then((m) => m.writeFileAtomic(${JSON.stringify(join(dir, 'credits.json'))}, Buffer.alloc(1 << 28), { guard: { assertHeld() {} } }))`],
    { stdio: 'ignore' },
  );
  const exited = new Promise((r) => writer.once('exit', r));
  t.teardown(() => void writer.kill('SIGKILL'));
  let names: string[] = [];
  const deadline = Date.now() + 20_000;
  while (names.length === 0 && Date.now() < deadline) {
    names = readdirSync(dir).filter((n) => n.endsWith('.tmp'));
    await new Promise((r) => setTimeout(r, 2));
  }
  writer.kill('SIGKILL');
  await exited;
  t.is(names.length, 1, 'caught the write half-way');
  t.deepEqual(await removeLeftovers(dir, { minAgeMs: 0 }), names);
  t.deepEqual(readdirSync(dir), []);
});

test('every folder the store writes in is swept: messages, media and flows per instance too, and journal compaction temps', async (t) => {
  // Rule guarded (issue 12): temp files left by a crash are removed wherever the store writes,
  // not only in the data dir root, credits/ and auth/.
  const dataDir = await tempDir('gw-leftovers-');
  const paths = storePaths(dataDir);
  const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
  const id = 'inst_abcdef123';
  const planted: string[] = [];
  for (const dir of [paths.dataDir, paths.creditsDir, paths.authDir, join(paths.messagesDir, id), join(paths.mediaDir, id), join(paths.flowsDir, id)]) {
    mkdirSync(dir, { recursive: true });
    const name = temp('journal.jsonl', dead);
    writeFileSync(join(dir, name), 'torn');
    writeFileSync(join(dir, 'keep.json'), '{}');
    planted.push(join(dir, name));
  }
  // A folder that is not an instance's is not walked into.
  mkdirSync(join(paths.mediaDir, 'not-an-instance'), { recursive: true });
  writeFileSync(join(paths.mediaDir, 'not-an-instance', temp('x', dead)), '');

  // The name a journal compaction uses is one the sweep recognises.
  const { journal } = await Journal.open(join(paths.messagesDir, id, 'journal.jsonl'), { guard: UNGUARDED });
  t.regex(basename(tempPath(journal.file)), /^\.journal\.jsonl\.\d+\.[0-9a-f]+\.tmp$/);
  await journal.close();

  t.deepEqual((await removeDataDirLeftovers(paths, { minAgeMs: 0 })).sort(), planted.sort());
  for (const p of planted) t.false(existsSync(p));
  t.true(existsSync(join(paths.flowsDir, id, 'keep.json')));
  t.is(readdirSync(join(paths.mediaDir, 'not-an-instance')).length, 1);
});

test('issue 21 item 6: taking the data dir lock removes every young temp file below it of a dead writer (thousands after a full disk), and keeps a live one', async (t) => {
  const dataDir = await tempDir('gw-leftovers-');
  const paths = storePaths(dataDir);
  mkdirSync(paths.creditsDir, { recursive: true });
  const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
  const live = spawn('sleep', ['60'], { stdio: 'ignore' });
  t.teardown(() => void live.kill('SIGKILL'));
  // Written a moment ago (younger than the 30 s any unlocked sweep waits), as a write that failed
  // on a full disk leaves them.
  const young = Array.from({ length: 500 }, (_, i) => temp(`inst_${String(i).padStart(12, 'a')}.jsonl`, dead));
  for (const name of young) writeFileSync(join(paths.creditsDir, name), '');
  const liveFile = temp('inst_live.jsonl', live.pid!);
  writeFileSync(join(paths.creditsDir, liveFile), '');

  const lock = await lockDataDir(dataDir, 'daemon', 0);
  t.teardown(() => unlockDataDir(lock));
  t.deepEqual(readdirSync(paths.creditsDir), [liveFile], 'every dead writer\'s temp file went, however young');
});
