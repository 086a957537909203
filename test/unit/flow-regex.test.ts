import test from 'ava';
import { RegexRefused, SafeRegex } from '../../src/flows/regex/matcher.js';
import { FLOW_LIMITS } from '../../src/flows/types.js';

const LIMITS = { repeat: FLOW_LIMITS.regexRepeat, program: FLOW_LIMITS.regexProgram };
const compile = (src: string) => SafeRegex.compile(src, LIMITS);

const PATTERNS = [
  '^(2|human|agent)$', 'a.*a.*a.*a.*b', '\\bhi\\b', '\\Bi', '^\\s*(hi|hello)\\s*$', '[^a]', '[a-z]+\\d{2,3}', 'x?y{0,2}z', '(?:ab|cd)+e',
  'colou?r', '^$', '\\w+@\\w+\\.com', '[\\d-z]', '\\x41', '[\\x41-\\x43]+', 'é', '[à-ÿ]', 'a{2}', 'a{2,}b', '\\.', '(?<n>ab)c', 'a|b|',
  '\\u00e9', '^#?\\d{4,10}$', '[\\s\\S]', '\\W', '.', 'a{', '{x}', '[]]', '[-a]', '\\cJ', '\\t', 'ab*?c', '^(a|b)*c$', '[^\\d\\s]+',
];
const INPUTS = [
  '2', 'Human', 'agent ', 'aaaaab', 'hi there', 'oh hi', 'say HI!', 'ship', '  hello ', 'a', 'b', 'abc12', 'abc1234', 'xyyz', 'z', 'ababcde',
  'Color', 'colour', '', 'foo@bar.com', '-', 'A', 'abC', 'É', 'À', 'aa', 'aab', '.', 'abc', 'é', '#12345', '123', 'a{', '{X}', ']', '\n',
  '\t', 'abbbc', 'AC', 'ababc', '12 ab', ' ',
];

test('the safe matcher agrees with JavaScript (case-insensitive) on a corpus', (t) => {
  for (const p of PATTERNS) {
    const safe = compile(p);
    const js = new RegExp(p, 'i');
    for (const input of INPUTS) t.is(safe.test(input), js.test(input), `/${p}/i on ${JSON.stringify(input)}`);
  }
});

const CATASTROPHIC = ['(a+)+$', '^(\\w+\\s?)*$', '(a|a)*b', '(a|ab)+c', '(yes|y)+', '(a?)*', '(|a)+', '(.*a){3}', '^(([a-z])+.)+[A-Z]([a-z])+$', '(x+x+)+y'];

test('patterns that backtrack catastrophically in a backtracking engine are refused', (t) => {
  for (const p of CATASTROPHIC) {
    const err = t.throws(() => compile(p), { instanceOf: RegexRefused }, p);
    t.regex(err?.message ?? '', /catastrophic|empty text/, p);
  }
});

test('invalid and unsupported patterns are refused with a reason', (t) => {
  t.regex(t.throws(() => compile('(a'))?.message ?? '', /does not compile/);
  t.regex(t.throws(() => compile('[z-a]'))?.message ?? '', /does not compile/);
  t.regex(t.throws(() => compile('(a)\\1'))?.message ?? '', /backreferences/);
  t.regex(t.throws(() => compile('a(?=b)'))?.message ?? '', /lookahead/);
  t.regex(t.throws(() => compile('(?<!a)b'))?.message ?? '', /lookahead and lookbehind/);
  t.regex(t.throws(() => compile('a{1000}'))?.message ?? '', /limit of 100/);
  t.regex(t.throws(() => compile('(?:abcdefghij){100}(?:abcdefghij){100}(?:abcdefghij){100}'))?.message ?? '', /too large/);
});

test('a hostile input against an accepted polynomial pattern is answered in linear time', (t) => {
  // JavaScript's engine needs ~n^4 steps for this pair; the safe matcher n x program size.
  const re = compile('a.*a.*a.*a.*b');
  const hostile = 'a'.repeat(4096);
  const started = Date.now();
  t.false(re.test(hostile));
  t.true(re.test(`${hostile}b`));
  t.true(Date.now() - started < 3000);
});
