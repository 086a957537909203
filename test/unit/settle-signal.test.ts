import test from 'ava';
import { SettleSignal } from '../../src/domain/settle-signal.js';

// Rule (issue "The house, second repair", item 1: the credit ledger's forget and drain polled every
// 5 ms): a wait for the credit stores to settle is woken by the change itself, and gives up at its bound.

test('a waiter resolves at the wake that makes its condition true, not before and without polling', async (t) => {
  const signal = new SettleSignal();
  let inFlight = 2;
  let checks = 0;
  let resolved = false;
  const waiting = signal.until(() => (checks++, inFlight === 0), 60_000).then(() => (resolved = true));
  await new Promise((r) => setTimeout(r, 50));
  t.is(checks, 1, 'checked once, then left alone while nothing changes');
  inFlight -= 1;
  signal.wake();
  await new Promise((r) => setImmediate(r));
  t.false(resolved, 'one send still in flight');
  inFlight -= 1;
  signal.wake();
  await waiting;
  t.true(resolved);
  t.is(checks, 3);
});

test('a waiter whose condition never holds gives up at its bound', async (t) => {
  const signal = new SettleSignal();
  const started = Date.now();
  await signal.until(() => false, 80);
  t.true(Date.now() - started >= 75);
  signal.wake();
  t.pass('a wake with nobody waiting is harmless');
});
