import test from 'ava';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { FlowValidationError, validateFlow } from '../../src/flows/validate.js';
import { exampleFlow } from '../../src/flows/example.js';

const base = exampleFlow;

function refuse(t: import('ava').ExecutionContext, flow: unknown, pattern: RegExp, node: string | null): void {
  const err = t.throws(() => validateFlow(flow), { instanceOf: FlowValidationError });
  t.regex(err?.message ?? '', pattern);
  t.is(err?.node ?? null, node);
  if (node !== null) t.true(err!.message.includes(`"${node}"`), err?.message);
}

test('the example flow from the issue is valid', (t) => {
  const flow = validateFlow(base());
  t.is(flow.name, 'support');
  t.deepEqual(Object.keys(flow.nodes), ['welcome', 'route', 'hours', 'agent']);
});

test('the ready-made flows in config/flows are valid', (t) => {
  const dir = fileURLToPath(new URL('../../config/flows/', import.meta.url));
  const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  t.true(files.length >= 2);
  for (const f of files) t.notThrows(() => validateFlow(JSON.parse(readFileSync(dir + f, 'utf8'))), f);
});

test('an unknown node reference names the node and the field', (t) => {
  const f = base();
  f.nodes.route = { type: 'condition', rules: [{ equals: '1', next: 'hourz' }] };
  refuse(t, f, /node "route": rules\[0\]\.next: no node named "hourz"/, 'route');
  const g = base();
  g.nodes.welcome = { type: 'message', text: 'x', next: 'nowhere' };
  refuse(t, g, /node "welcome": next: no node named "nowhere"/, 'welcome');
  const h = base();
  h.nodes.route = { type: 'condition', rules: [], else: 'gone' };
  refuse(t, h, /node "route": else: no node named "gone"/, 'route');
});

test('a missing or unknown start is refused', (t) => {
  const { start: _start, ...noStart } = base();
  refuse(t, noStart, /start is required/, null);
  refuse(t, { ...base(), start: 'hello' }, /start: no node named "hello"/, null);
});

test('a loop of message nodes is refused, naming the nodes', (t) => {
  const f = base();
  f.nodes.hours = { type: 'message', text: 'a', next: 'more' };
  f.nodes.more = { type: 'message', text: 'b', next: 'hours' };
  const err = t.throws(() => validateFlow(f), { instanceOf: FlowValidationError });
  t.regex(err?.message ?? '', /message nodes (hours -> more -> hours|more -> hours -> more) form a loop/);
  const self = base();
  self.nodes.hours = { type: 'message', text: 'again', next: 'hours' };
  refuse(t, self, /node "hours": message nodes hours -> hours form a loop/, 'hours');
});

test('a loop through a condition or a handover is fine', (t) => {
  const f = base();
  f.nodes.route = { type: 'condition', rules: [{ any: true, next: 'welcome' }], else: 'route' };
  t.notThrows(() => validateFlow(f));
});

test('regexes that do not compile or need backtracking (lookaround) are refused, naming the node', (t) => {
  const f = base();
  f.nodes.route = { type: 'condition', rules: [{ equals: '1', next: 'hours' }, { regex: 'a(?=b)', next: 'agent' }] };
  refuse(t, f, /node "route": rules\[1\]\.regex refused: unsupported: lookahead and lookbehind are not supported/, 'route');
  f.nodes.route = { type: 'condition', rules: [{ regex: '([a-z]', next: 'agent' }] };
  refuse(t, f, /node "route": rules\[0\]\.regex refused: does not compile/, 'route');
});

test('rule and node shapes are checked', (t) => {
  const f = base();
  f.nodes.route = { type: 'condition', rules: [{ equals: '1', contains: '2', next: 'hours' }] };
  refuse(t, f, /rules\[0\] needs exactly one of equals, contains, regex, any/, 'route');
  f.nodes.route = { type: 'condition', rules: [{ any: 'yes' }] };
  refuse(t, f, /rules\[0\]\.any: expected a boolean/, 'route');
  f.nodes.route = { type: 'condition', rules: [{ contains: '' }] };
  refuse(t, f, /rules\[0\]\.contains: must not be empty/, 'route');
  f.nodes.route = { type: 'button' };
  refuse(t, f, /node "route": type must be/, 'route');
  f.nodes.route = { type: 'message', text: 'x', nxt: 'hours' };
  refuse(t, f, /node "route": nxt: unknown field/, 'route');
  f.nodes.route = { type: 'message', text: '' };
  refuse(t, f, /node "route": text: must not be empty/, 'route');
  f.nodes.route = { type: 'message', text: 'Hello {{firstname}}' };
  refuse(t, f, /node "route": text: unknown template variable \{\{firstname\}\}/, 'route');
});

test('sizes are limited', (t) => {
  const many: Record<string, unknown> = {};
  for (let i = 0; i < 201; i++) many[`n${i}`] = { type: 'message', text: 'x' };
  refuse(t, { name: 'big', start: 'n0', nodes: many }, /nodes: must have at most 200 entries/, null);
  const f = base();
  f.nodes.hours = { type: 'message', text: 'x'.repeat(5000) };
  refuse(t, f, /node "hours": text: must be at most 4096 characters/, 'hours');
  const chain: Record<string, unknown> = {};
  for (let i = 0; i < 12; i++) chain[`m${i}`] = { type: 'message', text: `${i}`, ...(i < 11 ? { next: `m${i + 1}` } : {}) };
  refuse(t, { name: 'chain', start: 'm0', nodes: chain }, /node "m0": starts a chain of 12 message nodes/, 'm0');
  refuse(t, { name: 'x', start: 'a', nodes: { '../a': { type: 'message', text: 'x' } } }, /invalid node name/, null);
});

test('tool fields starting with "_" are kept, null references mean "ends"', (t) => {
  const f = base();
  f.nodes.hours = { type: 'message', text: 'x', next: null, _pos: { x: 1, y: 2 } };
  const flow = validateFlow({ ...f, _builder: 'v1' });
  t.deepEqual(flow.nodes.hours, { type: 'message', text: 'x', _pos: { x: 1, y: 2 } } as never);
  t.is((flow as unknown as Record<string, unknown>)._builder, 'v1');
  refuse(t, [], /must be a JSON object/, null);
});

// Issue 21 item 1: what a flow's regexes may cost in all, checked when it is saved, naming the
// node and the rule where a total crosses its limit.
const abRule = (k: number, next = 'hours') => ({ regex: Array.from({ length: 12 }, (_, i) => `[ab]*a[ab]{99}${'cdefghijklmnopqrstuvwxyz'[(k + i) % 24]}`).join('|'), next });

test('the regexes of one condition node are limited in total (issue 21: 49 rules of 12 [ab]*a[ab]{99}q)', (t) => {
  const f = base();
  f.nodes.route = { type: 'condition', rules: Array.from({ length: 49 }, (_, k) => abRule(k)) };
  refuse(t, f, /^node "route": rules\[4\]\.regex refused: the regexes of this condition node add up to 6245 RE2 steps once repetitions are expanded \(limit 5000 per condition node/, 'route');
  f.nodes.route = { type: 'condition', rules: Array.from({ length: 4 }, (_, k) => abRule(k)) };
  t.notThrows(() => validateFlow(f), '4 x 1,249 fit');
  // Cheap matchers do not count.
  f.nodes.route = { type: 'condition', rules: [...Array.from({ length: 4 }, (_, k) => abRule(k)), ...Array.from({ length: 40 }, (_, i) => ({ contains: `x${i}`, next: 'hours' }))] };
  t.notThrows(() => validateFlow(f));
});

test('the regexes of a flow are limited in total: instructions, characters, case-folding steps and count', (t) => {
  const nodes: Record<string, unknown> = { done: { type: 'message', text: 'ok' } };
  for (let n = 0; n < 11; n++) nodes[`c${n}`] = { type: 'condition', rules: Array.from({ length: 4 }, (_, k) => abRule(k + n, 'done')), else: 'done' };
  refuse(t, { name: 'big', start: 'c0', nodes }, /^node "c10": rules\[0\]\.regex refused: the regexes of the flow add up to 5\d{4} RE2 steps once repetitions are expanded \(limit 50000 per flow\)/, 'c10');
  delete nodes.c10;
  t.notThrows(() => validateFlow({ name: 'big', start: 'c0', nodes }), '10 nodes of 4,996 fit');

  // [\x80-\uffff] folds 65,408 characters: seven fit in a flow, the eighth does not.
  const wide = (n: number) => ({ name: 'wide', start: 'c', nodes: { c: { type: 'condition', rules: Array.from({ length: n }, (_, i) => ({ regex: `${i}[\\x80-\\uffff]`, next: 'c' })) } } });
  t.notThrows(() => validateFlow(wide(7)));
  refuse(t, wide(8), /^node "c": rules\[7\]\.regex refused: the character ranges of the flow's regexes add up to 523264 characters to fold case in \(limit 500000 per flow\)/, 'c');

  const many: Record<string, unknown> = {};
  for (let n = 0; n < 5; n++) many[`c${n}`] = { type: 'condition', rules: Array.from({ length: 50 }, (_, i) => ({ regex: `^${n}-${i}$` })) };
  refuse(t, { name: 'many', start: 'c0', nodes: many }, /^node "c4": rules\[0\]\.regex refused: the flow has more than 200 regex rules/, 'c4');
  delete many.c4;
  t.notThrows(() => validateFlow({ name: 'many', start: 'c0', nodes: many }));

  // 500-character patterns (502 instructions each), five per node: forty fit, not forty-one.
  const long: Record<string, unknown> = {};
  for (let n = 0; n < 9; n++) long[`c${n}`] = { type: 'condition', rules: Array.from({ length: n === 8 ? 1 : 5 }, (_, i) => ({ regex: `${n}${i}${'x'.repeat(498)}` })) };
  refuse(t, { name: 'long', start: 'c0', nodes: long }, /^node "c8": rules\[0\]\.regex refused: the regexes of the flow add up to 20500 characters \(limit 20000 per flow\)/, 'c8');
  delete long.c8;
  t.notThrows(() => validateFlow({ name: 'long', start: 'c0', nodes: long }));
});

test('one regex: wide character ranges and expansions are refused before re2js compiles them', (t) => {
  const f = base();
  f.nodes.route = { type: 'condition', rules: [{ regex: '[\\x80-\\uffff][\\x80-\\uffff]', next: 'hours' }] };
  refuse(t, f, /node "route": rules\[0\]\.regex refused: character ranges are too wide: case-insensitive matching has to fold 130816 characters \(limit 70000/, 'route');
  // Was 460,002 instructions and 320 ms of compiling before its size was refused.
  f.nodes.route = { type: 'condition', rules: [{ regex: `(?:(?:${'abcdefghij'.repeat(46)}){10}){100}`, next: 'hours' }] };
  refuse(t, f, /node "route": rules\[0\]\.regex refused: pattern is too large once repetitions are expanded \(up to \d+ steps, limit 2000\)/, 'route');
  // \S and classes holding it cost nothing to fold (each \S was 3 ms to compile as ranges).
  f.nodes.route = { type: 'condition', rules: [{ regex: '\\S'.repeat(250), next: 'hours' }, { regex: '[\\s\\S]'.repeat(70), next: 'hours' }] };
  t.notThrows(() => validateFlow(f));
});
