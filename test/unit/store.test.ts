import test from 'ava';
import { readFile, readdir, stat, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ManualClock, DAY_MS } from '../../src/domain/clock.js';
import { CreditStore } from '../../src/store/credits.js';
import { InstanceStore } from '../../src/store/instances.js';
import { CorruptStoreError } from '../../src/store/json-file.js';
import { writeFileAtomic } from '../../src/store/atomic-write.js';
import { hashSecret, verifySecret, generateApiKey } from '../../src/store/secrets.js';
import { tempDir } from '../helpers/daemon.js';

test('atomic writes leave no temp files and use mode 0600', async (t) => {
  const dir = await tempDir();
  const file = join(dir, 'x.json');
  await writeFileAtomic(file, '{"a":1}');
  await writeFileAtomic(file, '{"a":2}');
  t.is(await readFile(file, 'utf8'), '{"a":2}');
  t.deepEqual(await readdir(dir), ['x.json']);
  t.is((await stat(file)).mode & 0o777, 0o600);
});

test('create stores only the key hash and grants the trial once per owner', async (t) => {
  const dir = await tempDir();
  const clock = new ManualClock();
  const store = new InstanceStore(dir, clock, 30);
  await store.load();
  const a = await store.create({ owner: 'acme' });
  const b = await store.create({ owner: 'acme' });
  const c = await store.create({});
  t.true(a.trialGranted);
  t.false(b.trialGranted);
  t.true(c.trialGranted, 'absent owner is the shared default owner');
  t.is(a.record.premiumUntil, new Date(clock.now() + 30 * DAY_MS).toISOString());
  t.is(b.record.premiumUntil, null);
  const text = await readFile(join(dir, 'instances.json'), 'utf8');
  t.false(text.includes(a.apiKey), 'the key itself is never stored');
  t.true(text.includes(hashSecret(a.apiKey)));
  t.regex(a.apiKey, /^gw_live_[A-Za-z0-9_-]{32}$/);
});

test('a corrupt instances.json is refused and left untouched', async (t) => {
  const dir = await tempDir();
  const file = join(dir, 'instances.json');
  await writeFile(file, '{"version":1,"instances":{', { mode: 0o600 });
  const store = new InstanceStore(dir, new ManualClock());
  const err = await t.throwsAsync(store.load(), { instanceOf: CorruptStoreError });
  t.regex(err.message, /instances\.json/);
  await t.throwsAsync(store.create({}), { instanceOf: CorruptStoreError });
  t.is(await readFile(file, 'utf8'), '{"version":1,"instances":{');
});

test('a store file of the wrong shape is refused too', async (t) => {
  const dir = await tempDir();
  await writeFile(join(dir, 'instances.json'), '[1,2,3]');
  await t.throwsAsync(new InstanceStore(dir, new ManualClock()).load(), { instanceOf: CorruptStoreError });
});

test('concurrent updates in one process never lose a write', async (t) => {
  const dir = await tempDir();
  const stores = Array.from({ length: 4 }, () => new InstanceStore(dir, new ManualClock()));
  await Promise.all(stores.map((s) => s.load()));
  await Promise.all(Array.from({ length: 20 }, (_, i) => stores[i % 4]!.create({ name: `n${i}` })));
  const check = new InstanceStore(dir, new ManualClock());
  await check.load();
  t.is(check.list().length, 20);
});

test('ids like __proto__ are plain unknown keys', async (t) => {
  const dir = await tempDir();
  const store = new InstanceStore(dir, new ManualClock());
  await store.load();
  t.is(store.get('__proto__'), undefined);
  t.is(store.get('constructor'), undefined);
  await t.throwsAsync(store.modify('__proto__', () => undefined), { message: /no instance/ });
});

test('credits: add and debit never go below zero', async (t) => {
  const dir = await tempDir();
  const credits = new CreditStore(dir);
  await mkdir(join(dir, 'credits'), { recursive: true });
  t.is((await credits.read('inst_abcdefgh')).balance, 0);
  await credits.add('inst_abcdefgh', 3);
  const r = await credits.debit('inst_abcdefgh', 5);
  t.is(r.debited, 3);
  t.is(r.doc.balance, 0);
  t.is(r.doc.spent, 3);
});

test('premium grant extends from the current end while premium', async (t) => {
  const dir = await tempDir();
  const clock = new ManualClock();
  const store = new InstanceStore(dir, clock, 30);
  await store.load();
  const { record } = await store.create({});
  const granted = await store.grantPremium(record.id, 10);
  t.is(granted.premiumUntil, new Date(clock.now() + 40 * DAY_MS).toISOString());
  clock.advance(100 * DAY_MS);
  const again = await store.grantPremium(record.id, 1);
  t.is(again.premiumUntil, new Date(clock.now() + DAY_MS).toISOString());
});

test('verifySecret compares hashes and refuses empty or missing values', (t) => {
  const key = generateApiKey();
  const h = hashSecret(key);
  t.true(verifySecret(key, h));
  t.false(verifySecret(`${key}x`, h));
  t.false(verifySecret(undefined, h));
  t.false(verifySecret('', hashSecret('')));
  t.false(verifySecret(key, undefined));
});

test('reloads racing creates never drop a created instance', async (t) => {
  const dir = await tempDir();
  const store = new InstanceStore(dir, new ManualClock());
  await store.load();
  const credits = new CreditStore(dir);
  let stop = false;
  // The daemon reloads on every change it sees; here, as fast as it can.
  const reloader = (async () => {
    while (!stop) await store.load();
  })();
  const created = await Promise.all(
    Array.from({ length: 30 }, () =>
      store.create({}, async (id) => {
        await credits.add(id, 1); // the create waits inside its write, as provisioning does
      }),
    ),
  );
  stop = true;
  await reloader;
  const check = new InstanceStore(dir, new ManualClock());
  await check.load();
  for (const c of created) t.truthy(check.get(c.record.id), `${c.record.id} is on disk`);
  t.is(check.list().length, 30);
  t.is(store.list().length, 30, 'and in the loaded copy');
});
