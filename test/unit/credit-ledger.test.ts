/**
 * Guards the credit rules of the contract (issue 12 "nothing lost"; issue 17's group commit): a hold
 * is on disk before a send leaves, concurrent holds never oversell, each commit learns its own
 * balance, a release charges nothing, holds found at start are released, a deleted instance's
 * account never writes again, and a write the disk refuses fails the hold with STORAGE_UNAVAILABLE
 * (nothing sent) and recovers once the disk takes writes.
 */
import test from 'ava';
import { pino } from 'pino';
import { existsSync } from 'node:fs';
import { GatewayError } from '../../src/domain/errors.js';
import { CreditLedger } from '../../src/storage/files/credit-ledger.js';
import { CreditStore, type CreditState } from '../../src/storage/files/credits.js';
import type { Journal } from '../../src/storage/files/journal.js';
import { tempDir } from '../helpers/daemon.js';
import { UNGUARDED } from '../../src/fs/write-guard.js';

const logger = pino({ level: 'silent' });
const ID = 'inst_ledgertest';

async function funded(amount: number): Promise<{ store: CreditStore; ledger: CreditLedger }> {
  const store = new CreditStore(await tempDir(), UNGUARDED);
  const ledger = new CreditLedger(store, logger);
  if (amount > 0) await ledger.add(ID, amount);
  return { store, ledger };
}

test('concurrent holds never oversell; commits and releases add up on disk', async (t) => {
  const { store, ledger } = await funded(25);
  let committed = 0;
  const attempt = async (i: number): Promise<void> => {
    const hold = await ledger.hold(ID);
    if (!hold) return;
    await new Promise((r) => setImmediate(r));
    if (i % 7 === 0) {
      hold.release(); // a failed send
      return;
    }
    await hold.commit();
    committed += 1;
  };
  await Promise.all(Array.from({ length: 100 }, (_, i) => attempt(i)));
  await ledger.drain();
  const disk = await store.read(ID);
  t.is(disk.balance + committed, 25);
  t.is(disk.spent, committed);
  t.true(committed <= 25);
  t.is(ledger.balance(ID), disk.balance);
  await ledger.close();
});

test('commits of concurrent sends are batched and each learns its own balance', async (t) => {
  const { store, ledger } = await funded(10);
  const holds = await Promise.all(Array.from({ length: 5 }, () => ledger.hold(ID)));
  const balances = await Promise.all(holds.map((h) => h!.commit()));
  t.deepEqual([...balances].sort(), [5, 6, 7, 8, 9]);
  t.is((await store.read(ID)).balance, 5);
  await ledger.close();
});

test('a debit asked while the previous write is under way is written right after it, not a second later', async (t) => {
  // Guards "Performance, round 2": a commit queued during a write that carried other commits
  // waited for the next send to wake the ledger, or for the one-second retry when none came.
  const { store, ledger } = await funded(10);
  const [a, b] = await Promise.all([ledger.hold(ID), ledger.hold(ID)]);
  let firstDone = false;
  const first = a!.commit().then((balance) => ((firstDone = true), balance));
  // One turn: the first debit's write has started and waits for the disk.
  await new Promise((r) => setImmediate(r));
  const started = performance.now();
  const second = b!.commit();
  t.false(firstDone, 'the second debit must be asked while the first one is being written');
  t.deepEqual(await Promise.all([first, second]), [9, 8]);
  const ms = performance.now() - started;
  t.true(ms < 500, `the second debit took ${Math.round(ms)} ms (the retry timer is 1,000 ms)`);
  t.is((await store.read(ID)).balance, 8);
  await ledger.close();
});

test('a hold is on disk before hold() resolves; holds left by a crash are released at the next start', async (t) => {
  const { store, ledger } = await funded(3);
  const hold = await ledger.hold(ID);
  t.truthy(hold);
  t.is(store.loadSync(ID).state.held.size, 1, 'the hold is in the journal');
  // a crash: the ledger is gone without commit or release
  const next = new CreditLedger(store, logger);
  t.is(next.available(ID), 3, 'the crashed hold is not charged');
  await next.drain();
  t.is(store.loadSync(ID).state.held.size, 0, 'and released on disk');
  const again = await next.hold(ID);
  t.is(await again!.commit(), 2);
  await next.close();
  await ledger.close();
});

test('a deleted instance never gets its credit file back, whatever was in flight', async (t) => {
  const { store, ledger } = await funded(5);
  const hold = await ledger.hold(ID);
  const forgetting = ledger.forget(ID, 2_000);
  await hold!.commit();
  await forgetting;
  await store.remove(ID);
  t.is(await ledger.hold(ID), null, 'no new holds');
  await t.throwsAsync(ledger.add(ID, 3), { instanceOf: GatewayError, message: /deleted/ });
  await ledger.drain();
  t.false(existsSync(store.journalFile(ID)));
});

test('a write the disk refuses fails the hold with STORAGE_UNAVAILABLE and later holds recover', async (t) => {
  /** A store whose journals refuse appends while `full` is set. */
  class FlakyStore extends CreditStore {
    full = false;
    override async openJournal(id: string, state: CreditState, restart: boolean): Promise<Journal> {
      if (this.full) throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
      const journal = await super.openJournal(id, state, restart);
      const append = journal.append.bind(journal);
      journal.append = (text: string) => {
        if (this.full) {
          const durable = Promise.reject(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }));
          durable.catch(() => undefined);
          return { offset: 0, durable };
        }
        return append(text);
      };
      return journal;
    }
  }
  const store = new FlakyStore(await tempDir(), UNGUARDED);
  const ledger = new CreditLedger(store, logger);
  await ledger.add(ID, 2);
  store.full = true;
  const err = await t.throwsAsync(ledger.hold(ID), { instanceOf: GatewayError });
  t.is(err.code, 'STORAGE_UNAVAILABLE');
  t.regex(err.message, /nothing was sent/);
  t.is(ledger.available(ID), 2, 'a refused hold holds nothing');
  store.full = false;
  // The ledger probes the disk again on its own (about a second); holds work once a write succeeds.
  let hold = null;
  for (let i = 0; i < 40 && !hold; i++) {
    hold = await ledger.hold(ID).catch(() => null);
    if (!hold) await new Promise((r) => setTimeout(r, 100));
  }
  t.truthy(hold);
  t.is(await hold!.commit(), 1);
  t.is((await store.read(ID)).balance, 1);
  await ledger.close();
});
