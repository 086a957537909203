import test from 'ava';
import { pino } from 'pino';
import { CreditLedger } from '../../src/plans/credit-ledger.js';
import { CreditStore } from '../../src/store/credits.js';
import { tempDir } from '../helpers/daemon.js';

const logger = pino({ level: 'silent' });

test('concurrent holds never oversell, even with re-reads racing debit writes', async (t) => {
  const store = new CreditStore(await tempDir());
  const id = 'inst_ledgertest';
  await store.add(id, 25);
  const ledger = new CreditLedger(store, logger);
  let committed = 0;
  const attempt = async (i: number): Promise<void> => {
    if (i % 3 === 0) ledger.invalidate(id); // as the file watcher does
    const hold = await ledger.hold(id);
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
  const disk = await store.read(id);
  t.is(disk.balance + committed, 25);
  t.is(disk.spent, committed);
  t.true(committed <= 25);
  t.is(await ledger.balance(id), disk.balance);
});

test('credits added by another process are seen on the next hold after exhaustion', async (t) => {
  const store = new CreditStore(await tempDir());
  const id = 'inst_ledgertest';
  const ledger = new CreditLedger(store, logger);
  t.is(await ledger.hold(id), null);
  await new CreditStore(store.paths.dataDir).add(id, 1); // the CLI
  const hold = await ledger.hold(id);
  t.truthy(hold);
  t.is(await hold!.commit(), 0);
  t.is(await ledger.hold(id), null);
});

test('commits of concurrent sends are batched and each learns its own balance', async (t) => {
  const store = new CreditStore(await tempDir());
  const id = 'inst_ledgertest';
  await store.add(id, 10);
  const ledger = new CreditLedger(store, logger);
  const holds = await Promise.all(Array.from({ length: 5 }, () => ledger.hold(id)));
  const balances = await Promise.all(holds.map((h) => h!.commit()));
  t.deepEqual([...balances].sort(), [5, 6, 7, 8, 9]);
  t.is((await store.read(id)).balance, 5);
});

test('a re-read that started before a debit write does not resurrect spent credits', async (t) => {
  /** A disk whose reads are slow: a re-read resolves after the debit write finished. */
  class SlowReads extends CreditStore {
    override async read(id: string) {
      const doc = await super.read(id);
      await new Promise((r) => setTimeout(r, 30));
      return doc;
    }
  }
  for (let trial = 0; trial < 3; trial++) {
    const store = new SlowReads(await tempDir());
    const id = 'inst_ledgertest';
    await store.add(id, 5);
    const ledger = new CreditLedger(store, logger);
    const holds = await Promise.all(Array.from({ length: 5 }, () => ledger.hold(id)));
    // All credits are held: the next hold re-reads the file while the five debits are written.
    const extraPending = ledger.hold(id);
    await new Promise((r) => setImmediate(r)); // the re-read is under way
    const commits = holds.map((h) => h!.commit());
    const extra = await extraPending;
    await Promise.all(commits);
    const late = await ledger.hold(id);
    t.is(extra, null);
    t.is(late, null, `trial ${trial}: a spent credit came back`);
    t.is((await store.read(id)).balance, 0);
  }
});
