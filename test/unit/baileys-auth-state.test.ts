import test from 'ava';
import { spawn } from 'node:child_process';
import { watch } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { proto } from '@whiskeysockets/baileys';
import { AuthStateCorruptError, AuthStore, type AuthStoreOptions } from '../../src/connection/baileys/auth-state.js';
import { FileAuthStates } from '../../src/storage/files/auth-state.js';
import { silent } from './baileys-fake-socket.js';
import { UNGUARDED } from '../../src/fs/write-guard.js';

const authDirs = new WeakMap<AuthStore, string>();

/** The files engine's store of the instance whose credentials file is `file` (DIR/<id>.json). */
async function openStore(file: string, options: AuthStoreOptions): Promise<AuthStore> {
  const store = await AuthStore.open(new FileAuthStates(dirname(file), UNGUARDED), basename(file, '.json'), options);
  authDirs.set(store, dirname(file));
  return store;
}



async function tempFile(): Promise<{ dir: string; file: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-auth-'));
  return { dir, file: join(dir, 'auth', 'inst-1.json') };
}

test('creds and keys round-trip through the file, Buffers and app-state-sync-key included', async (t) => {
  const { dir, file } = await tempFile();
  const store = await openStore(file, { logger: silent, debounceMs: 5 });
  const { creds, keys } = store.state;
  creds.me = { id: '15550001111:3@s.whatsapp.net', name: 'Me' };
  creds.account = { details: Buffer.from([1, 2, 3]), accountSignature: new Uint8Array([9, 8, 7]) };
  creds.routingInfo = Buffer.from('route');
  store.saveCreds();
  await keys.set({
    'pre-key': { '1': { public: new Uint8Array([1, 1]), private: Buffer.from([2, 2]) } },
    session: { 'a.0': Buffer.from('session-bytes') },
    'app-state-sync-key': { AAAA: proto.Message.AppStateSyncKeyData.fromObject({ keyData: Buffer.from('k'), timestamp: 42 }) },
    'lid-mapping': { '123_reverse': '15551234567' },
  });
  await store.flush();

  const again = await openStore(file, { logger: silent });
  t.deepEqual(again.state.creds.noiseKey.public, creds.noiseKey.public);
  t.true(Buffer.isBuffer(again.state.creds.noiseKey.private));
  t.is(again.state.creds.me?.id, '15550001111:3@s.whatsapp.net');
  t.true(again.paired);
  t.deepEqual(Buffer.from(again.state.creds.account?.accountSignature ?? []), Buffer.from([9, 8, 7]));
  t.deepEqual(again.state.creds.routingInfo, Buffer.from('route'));
  t.is(again.state.creds.registrationId, creds.registrationId);

  const preKeys = await again.state.keys.get('pre-key', ['1', '2']);
  t.deepEqual(Object.keys(preKeys), ['1']);
  t.deepEqual(Buffer.from(preKeys['1']?.public ?? []), Buffer.from([1, 1]));
  const sessions = await again.state.keys.get('session', ['a.0']);
  t.deepEqual(Buffer.from(sessions['a.0'] ?? []), Buffer.from('session-bytes'));
  const appKeys = await again.state.keys.get('app-state-sync-key', ['AAAA']);
  const appKey = appKeys['AAAA'];
  t.true(appKey instanceof proto.Message.AppStateSyncKeyData);
  t.deepEqual(Buffer.from(appKey?.keyData ?? []), Buffer.from('k'));
  t.is((await again.state.keys.get('lid-mapping', ['123_reverse']))['123_reverse'], '15551234567');
  await rm(dir, { recursive: true, force: true });
});

test('setting a key to null deletes it', async (t) => {
  const { dir, file } = await tempFile();
  const store = await openStore(file, { logger: silent, debounceMs: 5 });
  await store.state.keys.set({ session: { x: Buffer.from('1'), y: Buffer.from('2') } });
  await store.state.keys.set({ session: { x: null } });
  await store.flush();
  const again = await openStore(file, { logger: silent });
  t.deepEqual(Object.keys(await again.state.keys.get('session', ['x', 'y'])), ['y']);
  await rm(dir, { recursive: true, force: true });
});

test('a burst of updates becomes one debounced write', async (t) => {
  const { dir, file } = await tempFile();
  const store = await openStore(file, { logger: silent, debounceMs: 30 });
  for (let i = 0; i < 50; i++) await store.state.keys.set({ session: { [`s${i}`]: Buffer.from([i]) } });
  // Nothing on disk yet: the quiet period has not passed.
  await t.throwsAsync(readFile(file, 'utf8'), { code: 'ENOENT' });
  await store.flush();
  const text = await readFile(file, 'utf8');
  t.true(text.includes('"s49"'));
  await rm(dir, { recursive: true, force: true });
});

test('a torn temp file from an interrupted write leaves the real file intact and is swept', async (t) => {
  const { dir, file } = await tempFile();
  const store = await openStore(file, { logger: silent, debounceMs: 5 });
  store.state.creds.me = { id: '15550001111@s.whatsapp.net' };
  store.saveCreds();
  await store.flush();
  const original = await readFile(file, 'utf8');
  // What a writer killed mid-write leaves behind: half a JSON document under a temp name of a dead pid.
  const torn = join(dir, 'auth', '.inst-1.json.999999999.deadbeef.tmp');
  await writeFile(torn, original.slice(0, Math.floor(original.length / 2)));

  const again = await openStore(file, { logger: silent });
  t.is(again.state.creds.me?.id, '15550001111@s.whatsapp.net');
  t.is(await readFile(file, 'utf8'), original);
  t.deepEqual((await readdir(join(dir, 'auth'))).filter((n) => n.endsWith('.tmp')), []);
  await rm(dir, { recursive: true, force: true });
});

test('killing a process in the middle of writing credentials leaves a usable session', async (t) => {
  const { dir, file } = await tempFile();
  const moduleUrl = pathToFileURL(join(process.cwd(), 'src/connection/baileys/auth-state.ts')).href;
  const filesUrl = pathToFileURL(join(process.cwd(), 'src/storage/files/auth-state.ts')).href;
  // The child keeps rewriting a large (a few MB) credentials file until it is killed.
  const child = `
    import { pino } from 'pino';
    const { AuthStore } = await import(${JSON.stringify(moduleUrl)});
    const { FileAuthStates } = await import(${JSON.stringify(filesUrl)});
    const store = await AuthStore.open(new FileAuthStates(${JSON.stringify(dirname(file))}, { assertHeld() {} }), ${JSON.stringify(basename(file, '.json'))}, { logger: pino({ level: 'silent' }), debounceMs: 1 });
    store.state.creds.me = { id: '15550001111@s.whatsapp.net' };
    store.saveCreds();
    await store.flush();
    process.stdout.write(Buffer.from(store.state.creds.noiseKey.public).toString('base64') + '\\n');
    for (let round = 0; ; round++) {
      const sessions = {};
      for (let i = 0; i < 2000; i++) sessions['s' + i] = Buffer.alloc(500, round % 256);
      await store.state.keys.set({ session: sessions });
      await store.flush();
    }
  `;
  let noiseKey = '';
  let interrupted = 0;
  for (const delayMs of [0, 1, 5]) {
    const proc = spawn(process.execPath, ['--import=tsx', '--input-type=module', '-e', child], { stdio: ['ignore', 'pipe', 'inherit'] });
    const key = await new Promise<string>((resolve, reject) => {
      let out = '';
      proc.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('\n')) resolve(out.trim());
      });
      proc.once('exit', () => reject(new Error('writer exited early')));
    });
    noiseKey ||= key;
    // Kill as soon as the next temp file appears (plus a little), i.e. in the middle of a write.
    await new Promise<void>((resolve) => {
      const watcher = watch(join(dir, 'auth'), (_event, name) => {
        if (!name?.endsWith('.tmp')) return;
        watcher.close();
        setTimeout(resolve, delayMs);
      });
    });
    proc.kill('SIGKILL');
    await new Promise((resolve) => proc.once('exit', resolve));
    const leftovers = (await readdir(join(dir, 'auth'))).filter((n) => n.endsWith('.tmp'));
    if (leftovers.length > 0) interrupted += 1;

    const store = await openStore(file, { logger: silent });
    t.is(Buffer.from(store.state.creds.noiseKey.public).toString('base64'), noiseKey, `after a kill at ${delayMs} ms`);
    t.is(store.state.creds.me?.id, '15550001111@s.whatsapp.net');
  }
  t.log(`${interrupted} of 3 kills landed while a temp file was being written`);
  t.true(interrupted > 0, 'no kill interrupted a write, so this proved nothing');
  t.deepEqual((await readdir(join(dir, 'auth'))).filter((n) => n.endsWith('.tmp')), []);
  await rm(dir, { recursive: true, force: true });
});

test('an unparseable credentials file is refused, not replaced by a new pairing', async (t) => {
  const { dir, file } = await tempFile();
  const store = await openStore(file, { logger: silent, debounceMs: 5 });
  store.saveCreds();
  await store.flush();
  const good = await readFile(file, 'utf8');
  await writeFile(file, good.slice(0, 100));
  const err = await t.throwsAsync(openStore(file, { logger: silent }), { instanceOf: AuthStateCorruptError });
  t.regex(err?.message ?? '', /inst-1\.json.*refusing/);
  t.is(await readFile(file, 'utf8'), good.slice(0, 100));

  await writeFile(file, JSON.stringify({ format: 1, creds: {}, keys: {} }));
  await t.throwsAsync(openStore(file, { logger: silent }), { instanceOf: AuthStateCorruptError, message: /incomplete/ });
  await rm(dir, { recursive: true, force: true });
});

test('remove() deletes the file, starts fresh and ignores late writes of the old session', async (t) => {
  const { dir, file } = await tempFile();
  const store = await openStore(file, { logger: silent, debounceMs: 5 });
  const old = store.state;
  old.creds.account = { details: Buffer.from('x') };
  store.saveCreds();
  await store.flush();
  await store.remove();
  await t.throwsAsync(readFile(file), { code: 'ENOENT' });
  t.false(store.paired);
  t.not(store.state, old);
  t.notDeepEqual(store.state.creds.noiseKey.public, old.creds.noiseKey.public);

  // A socket of the removed session still writing keys must not resurrect it.
  await old.keys.set({ session: { late: Buffer.from('1') } });
  await store.flush();
  await t.throwsAsync(readFile(file), { code: 'ENOENT' });
  t.deepEqual(await store.state.keys.get('session', ['late']), {});
  await rm(dir, { recursive: true, force: true });
});

test('the file is written with mode 0600', async (t) => {
  const { dir, file } = await tempFile();
  const store = await openStore(file, { logger: silent, debounceMs: 5 });
  store.saveCreds();
  await store.flush();
  const { stat } = await import('node:fs/promises');
  t.is((await stat(file)).mode & 0o777, 0o600);
  await rm(dir, { recursive: true, force: true });
});
