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
