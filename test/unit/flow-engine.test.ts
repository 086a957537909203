import test from 'ava';
import { pino } from 'pino';
import { compileFlow, matchInput, renderTemplate, type CompiledFlow } from '../../src/flows/compiled.js';
import { runFlow, type FirstMatch } from '../../src/flows/engine.js';
import { exampleFlow } from '../../src/flows/example.js';
import { RegexMatcher } from '../../src/flows/regex-matcher.js';
import { FLOW_LIMITS } from '../../src/flows/types.js';

// Rules guarded: a flow runs from its position, condition rules are tried in order (the regex
// rules on the matching worker, issue 21 item 1), message nodes send, a handover mutes.

const support = compileFlow(exampleFlow());
const who = { name: 'Ann', phone: '+15551234567' };
const matcher = new RegexMatcher({
  budgetMs: FLOW_LIMITS.matchBudgetMs,
  limits: { repeat: FLOW_LIMITS.regexRepeat, program: FLOW_LIMITS.regexProgram, span: FLOW_LIMITS.regexSpan },
  logger: pino({ level: 'silent' }),
});
test.after.always(() => matcher.stop());
const worker: FirstMatch = (patterns, text) => matcher.first('test', patterns, text);
const run = (flow: CompiledFlow, position: string | null, input: { text: string; name: string; phone: string }, firstMatch = worker) => runFlow(flow, position, input, firstMatch);

test('a first message runs from start and waits at the condition', async (t) => {
  const plan = await run(support, null, { text: 'hello', ...who });
  t.deepEqual(plan.sends, ['Hi Ann! 1 = opening hours, 2 = talk to a person']);
  t.is(plan.position, 'route');
  t.is(plan.handover, null);
});

test('a waiting condition evaluates the next message; a node without next ends the flow', async (t) => {
  const plan = await run(support, 'route', { text: '1', ...who });
  t.deepEqual(plan.sends, ['Mon-Fri 9-17.']);
  t.is(plan.position, null);
});

test('else goes back to the menu, which waits again', async (t) => {
  const plan = await run(support, 'route', { text: 'what?', ...who });
  t.deepEqual(plan.sends, ['Hi Ann! 1 = opening hours, 2 = talk to a person']);
  t.is(plan.position, 'route');
});

test('a handover sends its text and ends the run', async (t) => {
  const plan = await run(support, 'route', { text: 'AGENT', ...who });
  t.deepEqual(plan.sends, ['A colleague will answer you here shortly.']);
  t.deepEqual(plan.handover, { node: 'agent' });
  t.is(plan.position, null);
});

const matchers = compileFlow({
  name: 'matchers',
  start: 'c',
  nodes: {
    c: {
      type: 'condition',
      rules: [
        { equals: ' Yes ', next: 'eq' },
        { contains: 'PRICE', next: 'co' },
        { regex: '^order\\s*#?\\d+$', next: 're' },
        { any: true, next: 'an' },
      ],
    },
    eq: { type: 'message', text: 'equals' },
    co: { type: 'message', text: 'contains' },
    re: { type: 'message', text: 'regex' },
    an: { type: 'message', text: 'any' },
  },
});
const first = async (text: string) => (await run(matchers, null, { text: matchInput(text), ...who })).sends[0];

test('equals: trimmed and case-insensitive, whole text only', async (t) => {
  t.is(await first('  yES  '), 'equals');
  t.is(await first('yes please'), 'any');
});

test('contains: case-insensitive substring', async (t) => {
  t.is(await first('What is the Price?'), 'contains');
});

test('regex: case-insensitive, on the trimmed text', async (t) => {
  t.is(await first('  ORDER #1234 '), 'regex');
  t.is(await first('order abc'), 'any');
});

test('any matches everything, also an empty message', async (t) => {
  t.is(await first('something else'), 'any');
  t.is(await first(''), 'any');
});

test('rules are tried in order; no match and no else ends the flow', async (t) => {
  const flow = compileFlow({ name: 'x', start: 'c', nodes: { c: { type: 'condition', rules: [{ contains: 'a', next: 'm' }, { contains: 'ab', next: 'n' }] }, m: { type: 'message', text: 'first' }, n: { type: 'message', text: 'second' } } });
  t.deepEqual((await run(flow, null, { text: 'ab', ...who })).sends, ['first']);
  const none = await run(flow, null, { text: 'zzz', ...who });
  t.deepEqual(none.sends, []);
  t.is(none.position, null);
});

test('a condition whose else is itself waits silently', async (t) => {
  const flow = compileFlow({ name: 'x', start: 'c', nodes: { c: { type: 'condition', rules: [{ equals: 'ok', next: 'm' }], else: 'c' }, m: { type: 'message', text: 'done' } } });
  const plan = await run(flow, 'c', { text: 'nope', ...who });
  t.deepEqual(plan.sends, []);
  t.is(plan.position, 'c');
});

test('templates fill {{name}} and {{phone}}; an unknown name is empty', async (t) => {
  t.is(renderTemplate('Hi {{name}} ({{ phone }})', who), 'Hi Ann (+15551234567)');
  const flow = compileFlow({ name: 'x', start: 'm', nodes: { m: { type: 'message', text: 'Hi {{name}}, we will call {{phone}}' } } });
  t.deepEqual((await run(flow, null, { text: 'x', name: '', phone: '+4915112345678' })).sends, ['Hi , we will call +4915112345678']);
});

test('a handover with next resumes there; a stale position restarts from start', async (t) => {
  const flow = compileFlow({ name: 'x', start: 'a', nodes: { a: { type: 'handover', next: 'b' }, b: { type: 'message', text: 'back' } } });
  const plan = await run(flow, null, { text: 'x', ...who });
  t.deepEqual(plan.sends, []);
  t.is(plan.position, 'b');
  t.deepEqual((await run(flow, 'b', { text: 'x', ...who })).sends, ['back']);
  t.deepEqual((await run(support, 'removed-node', { text: 'x', ...who })).sends, ['Hi Ann! 1 = opening hours, 2 = talk to a person']);
});

test('matcher input is trimmed and cut to 4 KiB', (t) => {
  t.is(matchInput('  hi  '), 'hi');
  t.is(matchInput('x'.repeat(70_000)).length, 4096);
  t.is(matchInput(undefined), '');
});

test('regex rules before the first cheap match are asked together; a cut-off answer counts them as not matched and names the rule', async (t) => {
  const flow = compileFlow({
    name: 'x',
    start: 'c',
    nodes: {
      c: {
        type: 'condition',
        rules: [
          { regex: '^r0$', next: 'm0' },
          { equals: 'zzz', next: 'm1' },
          { regex: '^r2$', next: 'm2' },
          { contains: 'hello', next: 'm3' },
          { regex: '^r4$', next: 'm4' },
        ],
        else: 'm5',
      },
      ...Object.fromEntries([0, 1, 2, 3, 4, 5].map((i) => [`m${i}`, { type: 'message', text: `m${i}` }])),
    },
  });
  const asked: string[][] = [];
  const answering =
    (outcome: Awaited<ReturnType<FirstMatch>>): FirstMatch =>
    async (patterns) => {
      asked.push([...patterns]);
      return outcome;
    };
  const plan = await run(flow, null, { text: 'hello', ...who }, answering({ kind: 'none' }));
  t.deepEqual(asked.pop(), ['^r0$', '^r2$'], 'not ^r4$: "hello" takes rules[3] before it');
  t.deepEqual(plan.sends, ['m3']);
  t.is(plan.regexTrouble, null);
  t.deepEqual((await run(flow, null, { text: 'hello', ...who }, answering({ kind: 'matched', index: 1 }))).sends, ['m2']);

  const cut = await run(flow, null, { text: 'hello', ...who }, answering({ kind: 'budget', at: 1 }));
  t.deepEqual(cut.sends, ['m3'], 'the regexes count as not matched; the cheap rule after them still applies');
  t.deepEqual(cut.regexTrouble, { node: 'c', rule: 2, kind: 'budget' });

  const none = await run(flow, null, { text: 'nothing', ...who }, answering({ kind: 'budget', at: 0 }));
  t.deepEqual(asked.pop(), ['^r0$', '^r2$', '^r4$']);
  t.deepEqual(none.sends, ['m5']);
  t.deepEqual(none.regexTrouble, { node: 'c', rule: 0, kind: 'budget' });
  const failed = await run(flow, null, { text: 'nothing', ...who }, answering({ kind: 'failed', reason: 'broken' }));
  t.deepEqual(failed.sends, ['m5']);
  t.deepEqual(failed.regexTrouble, { node: 'c', rule: 0, kind: 'failed', reason: 'broken' });

  asked.length = 0;
  t.deepEqual((await run(flow, null, { text: 'zzz', ...who }, answering({ kind: 'matched', index: 0 }))).sends, ['m0'], 'a regex before a matching cheap rule still wins');
  t.deepEqual(asked, [['^r0$']]);
});
