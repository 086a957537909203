import test from 'ava';
import { setTimeout as sleep } from 'node:timers/promises';
import { ColdValue } from '../../src/connection/baileys/cold-value.js';
import { AccountBook } from '../../src/connection/baileys/account-book.js';

// Rule (issue "Performance, round 2", items 2 and 3): a session's account book is one string while
// no one uses it (not a Map and a Set of ~1,450 strings marked by every full collection), parsed at
// a use and for a while after; nothing changed is dropped when it cools down.

const map = (keepMs: number, text: string) => new ColdValue<Map<string, string>>(text, (t) => new Map(JSON.parse(t) as Array<[string, string]>), (m) => JSON.stringify([...m]), keepMs);

test('parsed at the first use, kept while used, dropped keepMs after the last use', async (t) => {
  // The clock the value reads is ours; its timers are real, and fire in order of due time.
  let now = 0;
  const v = new ColdValue<Map<string, string>>('[["a","1"]]', (s) => new Map(JSON.parse(s) as Array<[string, string]>), (m) => JSON.stringify([...m]), 20, () => now);
  t.false(v.isParsed);
  t.is(v.use().get('a'), '1');
  t.true(v.isParsed);
  now = 15;
  v.use();
  await sleep(40); // its timer found the last use 0 ms old by our clock: armed again
  t.true(v.isParsed, 'used since: still parsed');
  now = 100;
  await sleep(60);
  t.false(v.isParsed, 'unused for 85 ms of a 20 ms keep');
});

test('a change survives cooling down and is serialised once', async (t) => {
  let serialised = 0;
  const v = new ColdValue<Map<string, string>>('[]', (s) => new Map(JSON.parse(s) as Array<[string, string]>), (m) => ((serialised += 1), JSON.stringify([...m])), 30);
  v.use().set('b', '2');
  v.changed();
  await sleep(100);
  t.false(v.isParsed);
  t.is(serialised, 1);
  t.is(v.text(), '[["b","2"]]');
  t.is(v.text(), '[["b","2"]]');
  t.is(serialised, 1, 'unchanged text is not serialised again');
  t.is(v.use().get('b'), '2');
});

test('text() of an unchanged value is the stored string itself', (t) => {
  const stored = JSON.stringify([['c', '3']]);
  const v = map(1_000, stored);
  v.use();
  t.is(v.text(), stored);
  v.cool();
});

test('the account book reads, changes and saves its names and contacts through their stored text', async (t) => {
  const saved: Array<Record<string, Record<string, unknown>>> = [];
  const stored: Record<string, unknown> = { names: JSON.stringify([['15550000001@s.whatsapp.net', 'Ana']]), contacts: JSON.stringify(['15550000001@s.whatsapp.net']) };
  const book = new AccountBook();
  await book.bind({ get: () => stored, set: (d: Record<string, Record<string, unknown>>) => saved.push(d) });
  // A message's sender without a name changes nothing.
  book.contactsChanged([{ id: '15550000009@s.whatsapp.net' }]);
  book.flush();
  t.deepEqual(saved, []);
  t.is(book.nameOf('15550000001@s.whatsapp.net'), 'Ana');
  book.contactsChanged([{ id: '15550000002@s.whatsapp.net', name: 'Ben' }]);
  book.flush();
  t.deepEqual(JSON.parse(saved[0]!['gateway-account']!.names as string), [['15550000001@s.whatsapp.net', 'Ana'], ['15550000002@s.whatsapp.net', 'Ben']]);
  t.deepEqual(book.addressBook(), ['15550000001@s.whatsapp.net', '15550000002@s.whatsapp.net']);
});
