/**
 * Pairing and memory (issue 26 items 2 and 3): a session's one-time pre-keys are kept 64 bytes each
 * in one Buffer (src/connection/baileys/packed-table.ts). Guards: it behaves as the Map it replaces
 * for every id and value AuthStore can give it (packed or not), through sets, overwrites, deletes
 * and slot reuse, in the order a Map would iterate the packed entries.
 */
import { randomBytes } from 'node:crypto';
import test from 'ava';
import { PackedTable } from '../../src/connection/baileys/packed-table.js';

/** Entries by id (a Map iterates in insertion order; the table gives its packed entries first). */
const sorted = (entries: Iterable<[string, unknown]>) => [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

const packed = () => randomBytes(64).toString('latin1');

test('random sets, overwrites and deletes: the same answers as a Map, ids and values of every kind', (t) => {
  const table = new PackedTable();
  const model = new Map<string, unknown>();
  const ids = ['0', '1', '7', '812', '999999999', '1000000000', '007', '-1', '1.5', 'abc', ''];
  for (let i = 1; i <= 300; i++) ids.push(String(i));
  const values = () => {
    const r = Math.random();
    if (r < 0.7) return packed();
    if (r < 0.8) return '{"private":{"type":"Buffer","data":"x"}}';
    if (r < 0.9) return 'é'.repeat(32) + '€'.repeat(32); // 64 characters, not latin1
    return 'x'.repeat(63);
  };
  for (let step = 0; step < 5000; step++) {
    const id = ids[Math.floor(Math.random() * ids.length)]!;
    if (Math.random() < 0.3) {
      t.is(table.delete(id), model.delete(id), `delete ${id}`);
    } else {
      const v = values();
      table.set(id, v);
      model.set(id, v);
    }
    if (step % 250 === 0) {
      t.is(table.size, model.size);
      for (const each of ids) t.is(table.get(each), model.get(each), `get ${each}`);
      t.deepEqual(sorted(table), sorted(model), 'the same entries');
    }
  }
  t.deepEqual(sorted(table), sorted(model));
});

test('packed entries iterate in the order they were first set; a freed slot is reused and carries nothing of its last key', (t) => {
  const table = new PackedTable();
  const a = packed();
  const b = packed();
  const c = packed();
  table.set('3', a).set('1', b).set('2', c);
  t.deepEqual([...table].map(([id]) => id), ['3', '1', '2']);
  table.set('1', c); // an overwrite keeps its place
  t.deepEqual([...table], [['3', a], ['1', c], ['2', c]]);
  t.true(table.delete('3'));
  t.false(table.delete('3'));
  t.is(table.get('3'), undefined);
  const d = packed();
  table.set('4', d); // takes the freed slot
  t.is(table.get('4'), d);
  t.is(table.get('1'), c);
  t.deepEqual([...table].map(([id]) => id), ['1', '2', '4']);
  for (let i = 10; i < 2000; i++) table.set(String(i), packed()); // grows past its first capacities
  t.is(table.size, 3 + 1990);
  t.is(table.get('4'), d);
});
