/**
 * Issue 25 (usage per day on the plan card): the usage port's contract on every engine. Counts
 * are seen at once (before they are written), added per UTC day, kept after a flush and a reopen,
 * read for a range of days oldest first, swept by age, and removed with their instance.
 */
import { engineTest } from './engines.js';

const A = 'inst_usage000001';
const B = 'inst_usage000002';
const at = (iso: string): number => Date.parse(iso);

engineTest('usage: counts per day, seen before they are written, kept across a reopen, swept and removed', async (t, loc) => {
  const s = await loc.open();
  s.usage.count(A, at('2026-03-01T10:00:00Z'), true);
  s.usage.count(A, at('2026-03-01T23:59:59Z'), false);
  s.usage.count(A, at('2026-03-02T00:00:00Z'), true);
  s.usage.count(B, at('2026-03-02T08:00:00Z'), true);
  t.deepEqual(await s.usage.days(A, '2026-03-01', '2026-03-31'), [
    { date: '2026-03-01', sent: 2, debited: 1 },
    { date: '2026-03-02', sent: 1, debited: 1 },
  ]);
  await s.usage.flush();
  s.usage.count(A, at('2026-03-02T09:00:00Z'), true);
  t.deepEqual(await s.usage.days(A, '2026-03-02', '2026-03-02'), [{ date: '2026-03-02', sent: 2, debited: 2 }], 'written and pending add up');
  t.deepEqual(await s.usage.days(A, '2026-04-01', '2026-04-30'), []);
  await s.close();

  const again = await loc.open();
  t.deepEqual(await again.usage.days(A, '2026-01-01', '2026-12-31'), [
    { date: '2026-03-01', sent: 2, debited: 1 },
    { date: '2026-03-02', sent: 2, debited: 2 },
  ], 'close writes what was pending');
  await again.usage.sweep('2026-03-02');
  t.deepEqual((await again.usage.days(A, '2026-01-01', '2026-12-31')).map((d) => d.date), ['2026-03-02']);
  await again.usage.removeInstance(A);
  t.deepEqual(await again.usage.days(A, '2026-01-01', '2026-12-31'), []);
  t.deepEqual(await again.usage.days(B, '2026-01-01', '2026-12-31'), [{ date: '2026-03-02', sent: 1, debited: 1 }]);
});
