/**
 * Issue 25 (operators with their own accounts): the operator port's contract on every engine. An
 * operator is stored whole and read back, a name is taken once (a concurrent second create is
 * refused), a password reset changes only the hash and its time, removal forgets it, and all of it
 * survives a reopen.
 */
import type { OperatorRecord } from '../../src/storage/ports/operators.js';
import { engineTest } from './engines.js';

const op = (name: string, role: 'admin' | 'agent', instances: string[] = []): OperatorRecord => ({
  name,
  role,
  instances,
  passwordHash: `scrypt$16384$8$1$c2FsdHNhbHQ$${name}aGFzaGhhc2hoYXNoaGFzaA`,
  createdAt: '2026-01-01T00:00:00.000Z',
  passwordChangedAt: '2026-01-01T00:00:00.000Z',
});

engineTest('operators: create, a name taken once, get, list by name, reset, remove, and a reopen keeps them', async (t, at) => {
  const s = await at.open();
  t.deepEqual(await s.operators.list(), []);
  const [first, second] = await Promise.all([s.operators.create(op('bob', 'agent', ['inst_aaaaaaaaaaaa'])), s.operators.create(op('bob', 'admin'))]);
  t.deepEqual([first, second].sort(), [false, true], 'one create of a name wins');
  t.true(await s.operators.create(op('ann', 'admin')));
  t.false(await s.operators.create(op('ann', 'agent')), 'taken');
  t.deepEqual((await s.operators.list()).map((o) => o.name), ['ann', 'bob']);
  t.deepEqual(await s.operators.get('ann'), op('ann', 'admin'));
  t.is(await s.operators.get('nobody'), null);
  const reset = await s.operators.setPassword('ann', 'scrypt$16384$8$1$bmV3c2FsdA$bmV3aGFzaG5ld2hhc2huZXdoYXNo', '2026-02-02T00:00:00.000Z');
  t.deepEqual(reset, { ...op('ann', 'admin'), passwordHash: 'scrypt$16384$8$1$bmV3c2FsdA$bmV3aGFzaG5ld2hhc2huZXdoYXNo', passwordChangedAt: '2026-02-02T00:00:00.000Z' });
  t.is(await s.operators.setPassword('nobody', 'x', 'y'), null);
  // What a caller does with a record it got does not change the stored one.
  const got = await s.operators.get('ann');
  got!.instances.push('inst_bbbbbbbbbbbb');
  t.deepEqual((await s.operators.get('ann'))?.instances, []);
  await s.close();

  const again = await at.open();
  t.deepEqual(await again.operators.get('ann'), reset);
  t.true(await again.operators.remove('ann'));
  t.false(await again.operators.remove('ann'));
  t.deepEqual((await again.operators.list()).map((o) => o.name), ['bob']);
  await again.close();
  t.deepEqual((await (await at.open()).operators.list()).map((o) => o.name), ['bob']);
});
