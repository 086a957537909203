import test from 'ava';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AccountBook } from '../../src/connection/baileys/account-book.js';
import { AuthStore } from '../../src/connection/baileys/auth-state.js';
import { FileAuthStates } from '../../src/storage/files/auth-state.js';
import { UNGUARDED } from '../../src/fs/write-guard.js';
import { silent } from './baileys-fake-socket.js';

// Rule (issue "Performance, round 2", item 4): the account book hands a first sync's hundreds of
// contact events to the auth state as one change, not one whole copy of the book per event; and a
// save of the auth state always carries the book as it is (same snapshot as the app-state
// versions it came with), however soon after the events it is taken.

async function setup(t: { teardown(fn: () => Promise<void>): void }) {
  const dir = await mkdtemp(join(tmpdir(), 'gw-book-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const store = await AuthStore.open(new FileAuthStates(join(dir, 'auth'), UNGUARDED), 'inst_book1', { logger: silent, debounceMs: 60_000 });
  const book = new AccountBook();
  store.beforeSave(() => book.flush());
  const keys = store.state.keys;
  let sets = 0;
  const counted = { get: keys.get.bind(keys), set: (data: Parameters<typeof keys.set>[0]) => ((sets += 1), keys.set(data)) };
  await book.bind(counted);
  return { store, book, file: join(dir, 'auth', 'inst_book1.json'), sets: () => sets };
}

test('300 contact events in a row are one hand-over to the auth state', async (t) => {
  const { book, sets } = await setup(t);
  for (let i = 0; i < 300; i++) book.contactsChanged([{ id: `1555000${String(i).padStart(4, '0')}@s.whatsapp.net`, name: `Contact ${i}` }]);
  t.is(sets(), 0, 'nothing copied per event');
  book.flush();
  t.is(sets(), 1);
  t.is(book.nameOf('15550000299@s.whatsapp.net'), 'Contact 299');
});

test('a save right after the events has them: the store asks the book before its snapshot', async (t) => {
  const { store, book, file } = await setup(t);
  book.contactsChanged([{ id: '15550001111@s.whatsapp.net', name: 'Ann' }]);
  store.saveCreds(); // something else (creds, app-state versions) made the store dirty
  await store.flush();
  const saved = JSON.parse(await readFile(file, 'utf8')) as { keys: Record<string, Record<string, string>> };
  t.deepEqual(JSON.parse(saved.keys['gateway-account']?.names ?? '[]'), [['15550001111@s.whatsapp.net', 'Ann']]);
  t.deepEqual(JSON.parse(saved.keys['gateway-account']?.contacts ?? '[]'), ['15550001111@s.whatsapp.net']);
});

// Rule: the book reads back what it saved, and what a gateway before 2026-11 saved (names and
// contacts as objects by JID); a part it cannot read is empty, not a crash.
test('the book reads its own saves, the older object form, and nothing from a part it cannot read', async (t) => {
  const tables = (names: unknown, contacts: unknown) => ({
    get: async () => ({ labels: {}, names, contacts }),
    set: () => undefined,
  });
  const book = new AccountBook();
  await book.bind(tables(JSON.stringify([['15550001111@s.whatsapp.net', 'Ann']]), JSON.stringify(['15550001111@s.whatsapp.net'])));
  t.is(book.nameOf('15550001111@s.whatsapp.net'), 'Ann');
  t.deepEqual(book.addressBook(), ['15550001111@s.whatsapp.net']);
  const older = new AccountBook();
  await older.bind(tables({ '15550002222@s.whatsapp.net': 'Bob' }, { '15550002222@s.whatsapp.net': '1' }));
  t.is(older.nameOf('15550002222@s.whatsapp.net'), 'Bob');
  t.deepEqual(older.addressBook(), ['15550002222@s.whatsapp.net']);
  const broken = new AccountBook();
  await broken.bind(tables('[[1,', 42));
  t.is(broken.nameOf('15550001111@s.whatsapp.net'), undefined);
  t.deepEqual(broken.addressBook(), []);
});
