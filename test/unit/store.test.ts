import test from 'ava';
import { extendedPremium } from '../../src/plans/rules.js';
import { readFile, readdir, stat, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { DAY_MS } from '../../src/domain/clock.js';
import { GatewayError } from '../../src/domain/errors.js';
import { ManualClock } from '../helpers/manual-time.js';
import { CreditStore } from '../../src/storage/files/credits.js';
import { InstanceStore } from '../../src/storage/files/instances.js';
import { writeFileAtomic } from '../../src/fs/atomic-write.js';
import { hashSecret, verifySecret, generateApiKey } from '../../src/domain/secrets.js';
import { tempDir } from '../helpers/daemon.js';
import { UNGUARDED } from '../../src/fs/write-guard.js';

test('atomic writes leave no temp files and use mode 0600', async (t) => {
  const dir = await tempDir();
  const file = join(dir, 'x.json');
  await writeFileAtomic(file, '{"a":1}', { guard: UNGUARDED });
  await writeFileAtomic(file, '{"a":2}', { guard: UNGUARDED });
  t.is(await readFile(file, 'utf8'), '{"a":2}');
  t.deepEqual(await readdir(dir), ['x.json']);
  t.is((await stat(file)).mode & 0o777, 0o600);
});

test('create stores only the key hash and grants the trial once per owner', async (t) => {
  const dir = await tempDir();
  const clock = new ManualClock();
  const store = new InstanceStore(dir, clock, 30, UNGUARDED);
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
  const store = new InstanceStore(dir, new ManualClock(), 30, UNGUARDED);
  const err = await t.throwsAsync(store.load(), { instanceOf: GatewayError, message: /corrupt/ });
  t.regex(err.message, /instances\.json/);
  await t.throwsAsync(store.create({}), { instanceOf: GatewayError, message: /corrupt/ });
  t.is(await readFile(file, 'utf8'), '{"version":1,"instances":{');
});

test('a store file of the wrong shape is refused too', async (t) => {
  const dir = await tempDir();
  await writeFile(join(dir, 'instances.json'), '[1,2,3]');
  await t.throwsAsync(new InstanceStore(dir, new ManualClock(), 30, UNGUARDED).load(), { instanceOf: GatewayError, message: /corrupt/ });
});

test('concurrent creates on the one store (the single writer) never lose a write', async (t) => {
  const dir = await tempDir();
  const store = new InstanceStore(dir, new ManualClock(), 30, UNGUARDED);
  await store.load();
  await Promise.all(Array.from({ length: 20 }, (_, i) => store.create({ name: `n${i}` })));
  const check = new InstanceStore(dir, new ManualClock(), 30, UNGUARDED);
  await check.load();
  t.is(check.list().length, 20);
});

test('ids like __proto__ are plain unknown keys', async (t) => {
  const dir = await tempDir();
  const store = new InstanceStore(dir, new ManualClock(), 30, UNGUARDED);
  await store.load();
  t.is(store.get('__proto__'), undefined);
  t.is(store.get('constructor'), undefined);
  await t.throwsAsync(store.modify('__proto__', () => undefined), { message: /no instance/ });
});

test('credits: a journal replays its batches, ignores a torn last line and refuses a corrupt one', async (t) => {
  const dir = await tempDir();
  const credits = new CreditStore(dir, UNGUARDED);
  await mkdir(join(dir, 'credits'), { recursive: true });
  t.is((await credits.read('inst_abcdefgh')).balance, 0);
  const file = credits.journalFile('inst_abcdefgh');
  await writeFile(file, '{"add":5}\n{"hold":["a","b"]}\n{"commit":["a"]}\n{"release":["b"]}\n{"commit":["b"]}\n{"add":');
  const loaded = credits.loadSync('inst_abcdefgh');
  t.is(loaded.state.balance, 4, 'one hold committed; the released one is not charged even if committed later');
  t.is(loaded.state.spent, 1);
  t.is(loaded.state.held.size, 0);
  t.is(loaded.lines, 5, 'the torn last line was never acknowledged: ignored');
  await writeFile(file, '{"add":5}\n{"nope":1}\n');
  t.throws(() => credits.loadSync('inst_abcdefgh'), { instanceOf: GatewayError, message: /corrupt/ });
});

test('credits: the JSON file of earlier versions is read, and migrated by a restart of the journal', async (t) => {
  const dir = await tempDir();
  const credits = new CreditStore(dir, UNGUARDED);
  await mkdir(join(dir, 'credits'), { recursive: true });
  await writeFile(join(dir, 'credits', 'inst_legacy123.json'), JSON.stringify({ balance: 7, spent: 2, held: { h1: 1 } }));
  const loaded = credits.loadSync('inst_legacy123');
  t.true(loaded.legacy);
  t.is(loaded.state.balance, 7);
  t.deepEqual([...loaded.state.held], ['h1']);
  const journal = await credits.openJournal('inst_legacy123', loaded.state, true);
  await journal.close();
  t.deepEqual(await readdir(join(dir, 'credits')), ['inst_legacy123.jsonl']);
  const again = credits.loadSync('inst_legacy123');
  t.false(again.legacy);
  t.is(again.state.balance, 7);
  t.is(again.state.spent, 2);
});

test('premium grant extends from the current end while premium', async (t) => {
  const dir = await tempDir();
  const clock = new ManualClock();
  const store = new InstanceStore(dir, clock, 30, UNGUARDED);
  await store.load();
  const { record } = await store.create({});
  const granted = await store.modify(record.id, (r) => void (r.premiumUntil = extendedPremium(r.premiumUntil, 10, clock.now())));
  t.is(granted.premiumUntil, new Date(clock.now() + 40 * DAY_MS).toISOString());
  clock.advance(100 * DAY_MS);
  const again = await store.modify(record.id, (r) => void (r.premiumUntil = extendedPremium(r.premiumUntil, 1, clock.now())));
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

test('creates that wait inside their write (as provisioning does) never drop one another', async (t) => {
  const dir = await tempDir();
  const store = new InstanceStore(dir, new ManualClock(), 30, UNGUARDED);
  await store.load();
  const created = await Promise.all(
    Array.from({ length: 30 }, () =>
      store.create({}, async () => {
        await new Promise((r) => setTimeout(r, Math.random() * 5));
      }),
    ),
  );
  const check = new InstanceStore(dir, new ManualClock(), 30, UNGUARDED);
  await check.load();
  for (const c of created) t.truthy(check.get(c.record.id), `${c.record.id} is on disk`);
  t.is(check.list().length, 30);
  t.is(store.list().length, 30, 'and in the loaded copy');
});

// Rule (part 1: never corrupt stored data; issue "Performance, round 2": an update no longer deep-copies
// every instance): an update that fails, in its own code or at the write, leaves the loaded records
// exactly as they were, and an update changes no record of the document it copied.
test('a failed update leaves the loaded records as they were; a good one changes only its copy', async (t) => {
  const dir = await tempDir();
  const store = new InstanceStore(dir, new ManualClock(), 30, UNGUARDED);
  await store.load();
  const { record } = await store.create({ name: 'before' });
  const other = (await store.create({ name: 'other' })).record;
  const loaded = store.get(record.id)!;
  await t.throwsAsync(
    store.modify(record.id, (r) => {
      r.name = 'half-done';
      throw new Error('refused');
    }),
    { message: 'refused' },
  );
  t.is(store.get(record.id)!.name, 'before');
  // The write fails: instances.json is a directory now.
  const file = join(dir, 'instances.json');
  const text = await readFile(file, 'utf8');
  await import('node:fs/promises').then((fs) => fs.rm(file));
  await mkdir(file);
  await t.throwsAsync(store.modify(record.id, (r) => (r.name = 'unwritten')));
  await t.throwsAsync(store.markDeleting(record.id));
  t.is(store.get(record.id)!.name, 'before');
  t.falsy(store.getAny(record.id)!.deleting);
  await import('node:fs/promises').then((fs) => fs.rm(file, { recursive: true }));
  await writeFile(file, text, { mode: 0o600 });
  // A good update: the new record replaces the old one, which stays as it was (a reader holding it sees no change).
  const after = await store.modify(record.id, (r) => (r.name = 'after'));
  t.is(after.name, 'after');
  t.is(loaded.name, 'before');
  t.is(store.get(record.id)!.name, 'after');
  t.is(store.get(other.id), other, 'records no update touched are the same objects');
  t.is(JSON.parse(await readFile(file, 'utf8')).instances[record.id].name, 'after');
});
