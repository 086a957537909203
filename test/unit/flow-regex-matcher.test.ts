import test from 'ava';
import { pino } from 'pino';
import { RegexMatcher, type MatchOutcome } from '../../src/flows/regex-matcher.js';
import { FLOW_LIMITS } from '../../src/flows/types.js';

// Rule guarded (issue 21 item 1): flow regexes run on a worker thread within a time budget per
// message; past it the rule being tried and the ones after it count as not matched, and the next
// message still gets an answer. One instance's backlog does not hold up another's messages.
// Serial: each test's worker would otherwise take CPU from the others' budgets.

const LIMITS = { repeat: FLOW_LIMITS.regexRepeat, program: FLOW_LIMITS.regexProgram, span: FLOW_LIMITS.regexSpan };
const silent = pino({ level: 'silent' });

/** 12 patterns where re2js's DFA gives up: ~200 ms of work on a 4,096-character a/b message here. */
const STATE_HUNGRY = Array.from({ length: 12 }, (_, i) => `[ab]*a[ab]{99}${'cdefghijklmn'[i]}`).join('|');

function abMessage(): string {
  let state = 7;
  let out = '';
  for (let i = 0; i < 4096; i++) {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    out += state & 0x10000 ? 'a' : 'b';
  }
  return out;
}

test.serial('the first pattern that matches, in order, answers; no match answers none', async (t) => {
  const matcher = new RegexMatcher({ budgetMs: FLOW_LIMITS.matchBudgetMs, limits: LIMITS, logger: silent });
  try {
    t.deepEqual(await matcher.first('a', ['^no$', 'order\\s*#?\\d+', 'order'], 'ORDER #12'), { kind: 'matched', index: 1 });
    t.deepEqual(await matcher.first('a', ['^no$', 'nope'], 'yes'), { kind: 'none' });
    t.deepEqual(await matcher.first('a', [], 'yes'), { kind: 'none' }, 'no patterns: the worker is not asked');
  } finally {
    await matcher.stop();
  }
});

test.serial('a message that outruns the budget is cut off, naming the pattern that was running; the next message gets a fresh worker', async (t) => {
  // Eight state-hungry patterns are 1.6 s of work or more; the budget is under a fifth of that, and
  // ample for the small questions around it on a busy machine.
  const matcher = new RegexMatcher({ budgetMs: 300, limits: LIMITS, logger: silent });
  try {
    t.deepEqual(await matcher.first('a', ['warm'], 'warm up'), { kind: 'matched', index: 0 }, 'the worker is started before the budget is measured');
    const started = performance.now();
    const outcome = await matcher.first('a', ['^hello$', 'xyz', ...Array.from({ length: 8 }, () => STATE_HUNGRY)], abMessage());
    t.log(`cut off after ${(performance.now() - started).toFixed(0)} ms: ${JSON.stringify(outcome)}`);
    t.is(outcome.kind, 'budget');
    if (outcome.kind === 'budget') t.true(outcome.at >= 2 && outcome.at <= 9, `at ${outcome.at}`);
    t.deepEqual(await matcher.first('a', ['b{3}'], 'abbb'), { kind: 'matched', index: 0 });
  } finally {
    await matcher.stop();
  }
});

test.serial('messages are taken from each owner in turn: a backlog of one does not hold up another', async (t) => {
  // Each evil message is ~800 ms of work, cut at 250 ms; a kind one needs a few.
  const matcher = new RegexMatcher({ budgetMs: 250, limits: LIMITS, logger: silent });
  try {
    await matcher.first('warm', ['x'], 'x');
    const order: string[] = [];
    const ask = (owner: string, n: number, patterns: string[], text: string): Promise<MatchOutcome> =>
      matcher.first(owner, patterns, text).then((outcome) => {
        order.push(`${owner}${n}`);
        return outcome;
      });
    const hostile = abMessage();
    const all = [1, 2, 3, 4].map((n) => ask('evil', n, [STATE_HUNGRY, STATE_HUNGRY, STATE_HUNGRY, STATE_HUNGRY], hostile));
    all.push(ask('kind', 1, ['^hi$'], 'hi'), ask('kind', 2, ['^hi$'], 'hi'));
    const outcomes = await Promise.all(all);
    t.deepEqual(order, ['evil1', 'kind1', 'evil2', 'kind2', 'evil3', 'evil4']);
    t.deepEqual(outcomes.slice(4), [{ kind: 'matched', index: 0 }, { kind: 'matched', index: 0 }]);
    for (const o of outcomes.slice(0, 4)) t.is(o.kind, 'budget');
  } finally {
    await matcher.stop();
  }
});

test.serial('stop answers waiting messages and ends the worker; later questions get failed', async (t) => {
  const matcher = new RegexMatcher({ budgetMs: 5_000, limits: LIMITS, logger: silent });
  const running = matcher.first('a', [STATE_HUNGRY, STATE_HUNGRY], abMessage());
  const waiting = matcher.first('b', ['x'], 'x');
  await new Promise((r) => setTimeout(r, 50));
  await matcher.stop();
  t.is((await waiting).kind, 'failed');
  t.is((await running).kind, 'failed', 'the worker ended under it');
  t.is((await matcher.first('a', ['x'], 'x')).kind, 'failed');
});
