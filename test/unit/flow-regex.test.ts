import test from 'ava';
import { toRe2Syntax } from '../../src/flows/regex-syntax.js';
import { RegexRefused, SafeRegex } from '../../src/flows/safe-regex.js';
import { FLOW_LIMITS } from '../../src/flows/types.js';

// Rules guarded: flow regexes keep JavaScript's meaning (case-insensitive, no flags) while running
// on re2js in linear time; what RE2 cannot run is refused with the reason named.

const LIMITS = { repeat: FLOW_LIMITS.regexRepeat, program: FLOW_LIMITS.regexProgram, span: FLOW_LIMITS.regexSpan };
const compile = (src: string) => SafeRegex.compile(src, LIMITS);

const PATTERNS = [
  '^(2|human|agent)$', 'a.*a.*a.*a.*b', '\\bhi\\b', '\\Bi', '^\\s*(hi|hello)\\s*$', '[^a]', '[a-z]+\\d{2,3}', 'x?y{0,2}z', '(?:ab|cd)+e',
  'colou?r', '^$', '\\w+@\\w+\\.com', '[\\d-z]', '\\x41', '[\\x41-\\x43]+', 'é', '[à-ÿ]', 'a{2}', 'a{2,}b', '\\.', '(?<n>ab)c', 'a|b|',
  '\\u00e9', '^#?\\d{4,10}$', '[\\s\\S]', '\\W', '.', 'a{', '{x}', '[]]', '[-a]', '\\cJ', '\\t', 'ab*?c', '^(a|b)*c$', '[^\\d\\s]+',
  // Where RE2 and JavaScript differ unless translated:
  '^.$', '^\\s$', '^\\S$', '[^]', '^[]', '[[:alpha:]]', '[\\w-.]', '[a\\-z]', '\\-', '\\/', '[\\b]', '\\0', '\\é', '\\ ', 'a{,2}', '}', ']',
  '(a+)+$', '(yes|y)+', '[^\\s]', '[\\S]', '(?<year>\\d{4})-', 'a{1}?', '\\v', '[\\u00c0-\\u00ff]',
];
const INPUTS = [
  '2', 'Human', 'agent ', 'aaaaab', 'hi there', 'oh hi', 'say HI!', 'ship', '  hello ', 'a', 'b', 'abc12', 'abc1234', 'xyyz', 'z', 'ababcde',
  'Color', 'colour', '', 'foo@bar.com', '-', 'A', 'abC', 'É', 'À', 'aa', 'aab', '.', 'abc', 'é', '#12345', '123', 'a{', '{X}', ']', '\n',
  '\t', 'abbbc', 'AC', 'ababc', '12 ab', ' ', '\r', '\u2028', '\u00a0', '\u3000', '\ufeff', '[', ':', 'p', 'y', 'yes', '/', '\b', '\0',
  'a{,2}', '}', '2024-', '\v', 'm', '-.', 'q',
];

test('matching agrees with JavaScript (case-insensitive) on a corpus', (t) => {
  for (const p of PATTERNS) {
    const safe = compile(p);
    const js = new RegExp(p, 'i');
    for (const input of INPUTS) t.is(safe.test(input), js.test(input), `/${p}/i on ${JSON.stringify(input)}`);
  }
});

/** A seeded generator of JavaScript-syntax patterns and inputs, for a differential check. */
function generator(seed: number) {
  let state = seed;
  const next = () => (state = (state * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const atoms = ['a', 'B', 'é', 'É', '-', '.', '\\d', '\\w', '\\s', '\\S', '\\W', '\\D', '[a-c]', '[^b]', '[\\d-]', '[-x]', '[é-ü]', '\\.', 'k', 's',
    '[\\s]', '[^\\S]', '[]', '[^]', ' ', '\\t', '[\\w-.]', '[.]', '\\]', '\\[', '[\\]]', '[\\\\]', '\\x2d', '\\u00e9', '\\cJ', '\\0', '{', '}', ']'];
  const anchors = ['^', '$', '\\b', '\\B'];
  const quantifiers = ['', '', '', '*', '+', '?', '{2}', '{1,3}', '{0,}', '*?', '+?'];
  const pattern = (depth: number): string => {
    let out = '';
    for (let n = 1 + Math.floor(next() * 4); n > 0; n--) {
      if (next() < 0.1) out += pick(anchors);
      else if (depth > 0 && next() < 0.2) out += `(${pattern(depth - 1)}${next() < 0.3 ? `|${pattern(depth - 1)}` : ''})${pick(quantifiers)}`;
      else out += pick(atoms) + pick(quantifiers);
    }
    return out;
  };
  const chars = ['a', 'A', 'b', 'B', 'é', 'É', '-', '.', ' ', '\t', '\n', '\r', '\u00a0', '\u2028', '1', '_', 'x', 'K', 'k', 's', 'S', ']', '[', '\\', 'ü', 'Ü', '{', '\0'];
  const input = () => Array.from({ length: Math.floor(next() * 6) }, () => pick(chars)).join('');
  return { pattern: () => pattern(2), input };
}

test('a seeded differential run against JavaScript finds no difference', (t) => {
  const gen = generator(20_240_601);
  let compared = 0;
  for (let i = 0; i < 3_000; i++) {
    const p = gen.pattern();
    let js: RegExp;
    try {
      js = new RegExp(p, 'i');
    } catch {
      continue; // not JavaScript: refused by both
    }
    const safe = compile(p);
    for (let k = 0; k < 8; k++) {
      const input = gen.input();
      compared++;
      if (safe.test(input) !== js.test(input)) t.fail(`/${p}/i on ${JSON.stringify(input)}: JavaScript says ${js.test(input)}`);
    }
  }
  t.log(`${compared} pattern/input pairs agree`);
  t.pass();
});

test('case-insensitivity is Unicode simple case folding: the few letters where it is wider than JavaScript', (t) => {
  // Documented in docs/flows.md: RE2 folds s/S/ſ (long s), k/K/K (Kelvin sign), σ/ς/Σ together.
  t.true(compile('^s$').test('ſ'));
  t.true(compile('^k$').test('\u212a'));
  t.true(compile('^σ$').test('ς'));
  t.false(new RegExp('^s$', 'i').test('ſ'));
});

test('a catastrophic pattern answers a 30,000-character input in linear time', (t) => {
  // A backtracking engine needs about 2^n steps here; RE2 one pass.
  for (const p of ['(a+)+$', '^(\\w+\\s?)*$', '(a|a)*b', '(a|ab)+c', '(.*a){3}x', '(x+x+)+y']) {
    const re = compile(p);
    const hostile = `${'a'.repeat(30_000)}!`;
    const started = performance.now();
    const matched = re.test(hostile.replace(/a/g, p.includes('x') ? 'x' : 'a'));
    const ms = performance.now() - started;
    t.log(`/${p}/ on 30,001 characters: ${matched} in ${ms.toFixed(1)} ms`);
    t.true(ms < 1000, `${p} took ${ms} ms`);
  }
  t.false(compile('(a+)+$').test(`${'a'.repeat(30_000)}!`));
  t.true(compile('(a+)+$').test('a'.repeat(30_000)));
});

test('a hostile input against a polynomial pattern is answered in linear time', (t) => {
  const re = compile('a.*a.*a.*a.*b');
  const hostile = 'a'.repeat(30_000);
  const started = performance.now();
  t.false(re.test(hostile));
  t.true(re.test(`${hostile}b`));
  t.true(performance.now() - started < 1000);
});

test('hostile messages against a state-hungry pattern leave a bounded DFA cache behind', (t) => {
  // Each new 4 KiB message of random a/b builds thousands of DFA states for this pattern; re2js
  // would keep up to 8 MiB of them per pattern, and a flow may hold thousands of patterns.
  const re = compile('(a|b)*a(a|b){20}c');
  let seed = 7;
  const bit = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) & 0x10000 ? 'a' : 'b');
  let largest = 0;
  const started = performance.now();
  for (let i = 0; i < 10; i++) {
    t.false(re.test(`${Array.from({ length: 4096 }, bit).join('')}xc`)); // the c defeats re2js's literal prefilter
    largest = Math.max(largest, re.cachedBytes);
  }
  t.log(`10 hostile 4 KiB messages: ${((performance.now() - started) / 10).toFixed(1)} ms each, at most ${largest} bytes of DFA kept`);
  t.true(largest <= 64 * 1024);
  t.true(re.test(`xx${'a'.repeat(21)}c`), 'still matches after the cache was dropped');
});

test('backreferences are refused, naming the problem', (t) => {
  for (const p of ['(a)\\1', '(?<n>a)\\k<n>', '(a)(b)\\2']) {
    const err = t.throws(() => compile(p), { instanceOf: RegexRefused }, p);
    t.regex(err?.message ?? '', /backreferences are not supported/, p);
  }
});

test('invalid and unsupported patterns are refused with a reason', (t) => {
  t.regex(t.throws(() => compile('(a'))?.message ?? '', /does not compile/);
  t.regex(t.throws(() => compile('[z-a]'))?.message ?? '', /does not compile/);
  t.regex(t.throws(() => compile('a(?=b)'))?.message ?? '', /lookahead/);
  t.regex(t.throws(() => compile('a(?!b)'))?.message ?? '', /lookahead/);
  t.regex(t.throws(() => compile('(?<!a)b'))?.message ?? '', /lookahead and lookbehind/);
  t.regex(t.throws(() => compile('(?<=a)b'))?.message ?? '', /lookahead and lookbehind/);
  t.regex(t.throws(() => compile('\\p{L}'))?.message ?? '', /unknown escape \\p/);
  t.regex(t.throws(() => compile('\\a'))?.message ?? '', /unknown escape \\a/);
  t.regex(t.throws(() => compile('\\012'))?.message ?? '', /octal/);
  t.regex(t.throws(() => compile('\\ud800'))?.message ?? '', /lone surrogate/);
});

test('counted repetition and program size keep their limits', (t) => {
  t.regex(t.throws(() => compile('a{1000}'))?.message ?? '', /limit of 100/);
  t.regex(t.throws(() => compile('a{2,101}'))?.message ?? '', /limit of 100/);
  t.notThrows(() => compile('a{100}'));
  t.regex(t.throws(() => compile('(?:abcdefghij){100}(?:abcdefghij){100}(?:abcdefghij){100}'))?.message ?? '', /too large/);
  t.regex(t.throws(() => compile('(?:(?:(?:a{100}){100}){100}){100}'))?.message ?? '', /too large|linear-time engine/);
  t.log(`program size of (?:abcdefghij){100}: ${compile('(?:abcdefghij){100}').size}`);
});

test('a character outside the BMP counts as one character', (t) => {
  t.true(compile('^.$').test('😀'));
  t.true(compile('^\\ud83d\\ude00$').test('😀'));
  t.true(compile('^[😀]$').test('😀'), 'JavaScript without the u flag would see two characters here');
});

// Issue 21 item 1: compiling a flow's regexes happens on the event loop, so what it costs is known
// from the source and bounded before re2js spends anything.

test('\\S and classes holding it keep their JavaScript meaning and cost nothing to fold', (t) => {
  const patterns = ['\\S', '[\\S]', '[^\\S]', '[\\S\\t]', '[^\\S\\t]', '[^\\S ]', '[\\S\\x20-\\x21]', '[^\\S\\x09-\\x20]', '[\\s\\S]', '[^\\s\\S]',
    '[\\S\\D]', '[^\\S\\D]', '[^\\S\\d]', '[\\S\\w]', '[^\\S\\w]', '[^\\S\\W]', '[\\S-a]', '[^\\S-\\t]', '[^\\S\\u3000\\u2000-\\u2005]', '^\\S+@\\S+$'];
  const inputs = [' ', '\t', '\n', '\v', '\f', '\r', '\u00a0', '\u1680', '\u2000', '\u2005', '\u2006', '\u200a', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\ufeff',
    'a', 'A', 'ſ', '-', '1', '_', '!', '\u200b', 'ann@example.com', 'ann @example.com', '😀'];
  for (const p of patterns) {
    const safe = compile(p);
    t.true(safe.span <= 30, `/${p}/ folds ${safe.span} characters`);
    const js = new RegExp(p, 'i');
    for (const input of inputs) t.is(safe.test(input), js.test(input), `/${p}/i on ${JSON.stringify(input)}`);
  }
  t.is(compile('\\S'.repeat(250)).span, 0);
});

test('case-folding work is counted per class range: a range covering all of it is free', (t) => {
  t.is(compile('[\\x80-\\uffff]').span, 0xffff - 0x80 + 1);
  t.is(compile('[^\\x80-\\uffff]').span, 0xffff - 0x80 + 1, 'a negated class folds what it leaves out');
  t.is(compile('[^]').span, 0);
  t.is(compile('[\\x00-\\uffff]').span, 0xffff - 0x41 + 1, 'the fold range runs past U+FFFF: this one does not cover it');
  t.true(compile('[a-z].[^a]\\d\\w\\W\\D\\s').span < 60);
  t.regex(t.throws(() => compile('[\\x80-\\uffff]x[\\u0100-\\u2000]'))?.message ?? '', /character ranges are too wide: case-insensitive matching has to fold 73345 characters \(limit 70000/);
});

test('the program size known from the source is never below what re2js compiles', (t) => {
  let seed = 42;
  const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const atoms = ['a', 'B', 'é', '\\d', '\\w', '\\s', '\\S', '[a-c]', '[^b]', '.', '\\b', '^', '$', '[\\s\\S]', 'ab', 'xyz', '{', '}'];
  const quantifiers = ['', '', '*', '+', '?', '{2}', '{1,3}', '{0,}', '{3,}', '{0}', '{10}', '{2,20}', '*?', '{5}?'];
  const pattern = (depth: number): string => {
    let out = '';
    for (let n = 1 + Math.floor(next() * 4); n > 0; n--) {
      if (depth > 0 && next() < 0.35) {
        const alternatives = [pattern(depth - 1)];
        while (next() < 0.4) alternatives.push(pattern(depth - 1));
        out += `(${alternatives.join('|')})${pick(quantifiers)}`;
      } else out += pick(atoms) + pick(quantifiers);
    }
    return out;
  };
  let compared = 0;
  let tightest = Infinity;
  for (let i = 0; i < 5_000; i++) {
    const p = pattern(3);
    let bound: number;
    let size: number;
    try {
      new RegExp(p, 'i');
      bound = toRe2Syntax(p, 100).size;
      size = SafeRegex.compile(p, { ...LIMITS, program: 1_000_000 }).size;
    } catch {
      continue; // not JavaScript, or RE2's own limits
    }
    compared++;
    tightest = Math.min(tightest, bound - size);
    if (bound < size) t.fail(`/${p}/: bound ${bound} below the compiled ${size}`);
  }
  t.log(`${compared} patterns, smallest margin ${tightest}`);
  t.true(compared > 2_000);
});
