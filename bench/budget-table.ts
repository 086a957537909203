import { BUDGETS, type Budget } from './budgets.js';

export interface BudgetRow {
  key: string;
  value: number;
  budget: string;
  pass: boolean;
}

function passes(b: Budget, value: number): boolean {
  // NaN (a measurement that produced nothing) is a miss, never a pass.
  return b.kind === 'min' ? value >= b.limit : value <= b.limit;
}

/** The budgeted keys present in `result`, judged; keys a BENCH_ONLY run did not measure are left out. */
export function judge(result: Readonly<Record<string, unknown>>, budgets: readonly Budget[] = BUDGETS): BudgetRow[] {
  const rows: BudgetRow[] = [];
  for (const b of budgets) {
    const raw = result[b.key];
    if (raw === undefined) continue;
    const value = typeof raw === 'number' ? raw : Number.NaN;
    rows.push({ key: b.key, value, budget: `${b.kind === 'min' ? '>=' : '<='} ${b.limit}`, pass: passes(b, value) });
  }
  return rows;
}

/** `KEY | value | budget | PASS/MISS`, one line per row, columns padded. */
export function formatTable(rows: readonly BudgetRow[]): string[] {
  const cells = [['KEY', 'value', 'budget', 'PASS/MISS'], ...rows.map((r) => [r.key, String(r.value), r.budget, r.pass ? 'PASS' : 'MISS'])];
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((c) => c[i]!.length)));
  return cells.map((c) => c.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ').trimEnd());
}
