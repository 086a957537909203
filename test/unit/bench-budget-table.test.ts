// Guards the bench's budget verdicts (issue "Performance, round 2", item 1): every budgeted key of
// a run is judged PASS or MISS against bench/budgets.ts, a key the run did not measure
// (BENCH_ONLY) is left out, and a measurement that came out as nothing is a MISS, never a PASS.
import test from 'ava';
import { formatTable, judge } from '../../bench/budget-table.js';
import { BUDGETS } from '../../bench/budgets.js';

const budgets = [
  { key: 'ratio', kind: 'min', limit: 0.55 },
  { key: 'ms', kind: 'max', limit: 25 },
  { key: 'absent', kind: 'max', limit: 1 },
] as const;

test('a min budget passes at or above its limit, a max budget at or below', (t) => {
  t.deepEqual(
    judge({ ratio: 0.55, ms: 25 }, budgets).map((r) => r.pass),
    [true, true],
  );
  t.deepEqual(
    judge({ ratio: 0.549, ms: 26 }, budgets).map((r) => r.pass),
    [false, false],
  );
});

test('keys a run did not measure are not judged; unmeasured values (NaN, null) miss', (t) => {
  const rows = judge({ ratio: Number.NaN, ms: null, other: 3 }, budgets);
  t.deepEqual(rows.map((r) => r.key), ['ratio', 'ms']);
  t.true(rows.every((r) => !r.pass));
});

test('the table has a header and one aligned line per budgeted key', (t) => {
  const lines = formatTable(judge({ ratio: 0.6, ms: 30 }, budgets));
  t.is(lines.length, 3);
  t.regex(lines[0]!, /^KEY\s+\| value \| budget\s+\| PASS\/MISS$/);
  t.regex(lines[1]!, /^ratio \| 0\.6\s+\| >= 0\.55 \| PASS$/);
  t.regex(lines[2]!, /^ms\s+\| 30\s+\| <= 25\s+\| MISS$/);
});

test('the round-2 budgets are the ones in the issue', (t) => {
  const of = (key: string) => BUDGETS.find((b) => b.key === key);
  t.deepEqual(of('send_vs_koa'), { key: 'send_vs_koa', kind: 'min', limit: 0.55 });
  t.deepEqual(of('send_p99_ms'), { key: 'send_p99_ms', kind: 'max', limit: 25 });
  t.deepEqual(of('webhook_eps'), { key: 'webhook_eps', kind: 'min', limit: 2200 });
  t.deepEqual(of('webhook_p99_ms'), { key: 'webhook_p99_ms', kind: 'max', limit: 50 });
  t.deepEqual(of('sessions_idle_cpu_pct'), { key: 'sessions_idle_cpu_pct', kind: 'max', limit: 4 });
});
