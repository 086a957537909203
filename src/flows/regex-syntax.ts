import { GatewayError } from '../domain/errors.js';
/**
 * Flow regexes are written in JavaScript syntax (no flags, always case-insensitive) and run on
 * re2js, whose syntax is RE2's. This rewrites a pattern that `new RegExp(source, 'i')` accepts into
 * RE2 syntax with the JavaScript meaning, and refuses what RE2 cannot run or what would silently
 * change meaning. It runs nothing itself: matching is re2js's.
 *
 * Where the two dialects differ and a pattern would otherwise change meaning:
 * - `.` excludes \n, \r, U+2028 and U+2029 in JavaScript, only \n in RE2;
 * - `\s` and `\S` cover Unicode spaces in JavaScript, ASCII only in RE2;
 * - `[]` matches nothing and `[^]` anything in JavaScript, while RE2 reads `]` first in a class as
 *   a literal; `[[:alpha:]]` is a POSIX class in RE2 and four literals plus `]` in JavaScript;
 * - `[\d-z]` is `\d`, `-` and `z` in JavaScript (Annex B), an error in RE2;
 * - `\a`, `\p{L}`, `\A`, `\z`, `\Q` are letters in JavaScript without the u flag and special in RE2:
 *   unknown letter escapes are refused, as they always were here;
 * - `\uHHHH`, `\cX`, `\0` and identity escapes such as `\é` are spelled differently.
 * Groups become non-capturing: only "does it match" is asked, and RE2's group names are stricter.
 *
 * It also keeps compiling cheap, because flows are compiled on the event loop when they are saved
 * and loaded. re2js folds case in a character class one code point at a time across the range
 * U+0041-U+1E943 (a range that covers all of it is free), so `[\x80-\uffff]` costs about 65,000
 * steps (2 ms; `\S` written as ranges cost 3 ms each, 750 ms for a 500-character pattern). `\S` is
 * therefore written as a negated class of the spaces, a class holding `\S` is rewritten by De
 * Morgan's law into one over spaces only, and what remains is counted (`span`) and bounded.
 */

/** A pattern the linear-time engine will not run (INVALID_FIELD), with the reason. */
export class RegexRefused extends GatewayError {
  constructor(message: string) {
    super('INVALID_FIELD', message);
    this.name = 'RegexRefused';
  }
}

/** ECMAScript WhiteSpace and LineTerminator, as [from, to] code points. */
const JS_SPACE: ReadonlyArray<readonly [number, number]> = [
  [0x09, 0x0d], [0x20, 0x20], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a],
  [0x2028, 0x2029], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff],
];
const MAX_CODE_POINT = 0x10ffff;

const hex = (cp: number): string => `\\x{${cp.toString(16)}}`;
/**
 * One code point as an RE2 literal, in a class or out of one. Plainly where that is safe, since
 * re2js parses `\x{e9}` three times slower than `é`: letters, digits, space and anything in the
 * BMP from U+00A0 (RE2's syntax characters are all ASCII); ASCII punctuation with a backslash
 * (always a literal in RE2); the rest (controls, astral code points) in hex.
 */
function char(cp: number): string {
  if ((cp >= 0x30 && cp <= 0x39) || (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a) || cp === 0x20) return String.fromCharCode(cp);
  if (cp > 0x20 && cp < 0x7f) return `\\${String.fromCharCode(cp)}`;
  if (cp >= 0xa0 && cp <= 0xffff && (cp < 0xd800 || cp > 0xdfff)) return String.fromCharCode(cp);
  return hex(cp);
}
const ranges = (list: ReadonlyArray<readonly [number, number]>): string => list.map(([a, b]) => (a === b ? char(a) : `${char(a)}-${char(b)}`)).join('');

/**
 * Where re2js folds case one code point at a time (its Unicode.MIN_FOLD and MAX_FOLD); a class
 * range that covers all of it is taken as it is.
 */
const FOLD_FROM = 0x41;
const FOLD_TO = 0x1e943;

/** Case-folding steps re2js spends on the class range [a, b] (see the header). */
function foldSteps(a: number, b: number): number {
  if (a <= FOLD_FROM && b >= FOLD_TO) return 0;
  return Math.max(0, Math.min(b, FOLD_TO) - Math.max(a, FOLD_FROM) + 1);
}

type ClassLetter = 'd' | 'D' | 'w' | 'W' | 's' | 'S';
/** Class contents (no brackets) for the class escapes but \S; \d and \w mean the same in RE2. */
const CLASS_ESCAPE: Record<Exclude<ClassLetter, 'S'>, string> = { d: '\\d', D: '\\D', w: '\\w', W: '\\W', s: ranges(JS_SPACE) };
/** Whether a class escape holds no space (true) or every space (false), for the De Morgan rewrite of a class holding \S. */
const SPACE_FREE: Record<ClassLetter, boolean> = { d: true, w: true, S: true, D: false, W: false, s: false };
const ANYTHING = `[${hex(0)}-${hex(MAX_CODE_POINT)}]`;
const NOTHING = `[^${hex(0)}-${hex(MAX_CODE_POINT)}]`;

/** `list` without the code points [a, b]. */
function without(list: ReadonlyArray<readonly [number, number]>, a: number, b: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const [x, y] of list) {
    if (y < a || x > b) out.push([x, y]);
    else {
      if (x < a) out.push([x, a - 1]);
      if (y > b) out.push([b + 1, y]);
    }
  }
  return out;
}

const CONTROL: Record<string, number> = { t: 9, n: 10, v: 11, f: 12, r: 13 };
/** Characters JavaScript lets a backslash quote outside the u flag that are syntax somewhere. */
const SYNTAX = new Set('^$\\.*+?()[]{}|/-'.split(''));
const QUANTIFIER = /^\{(\d+)(?:,(\d*))?\}/;
const JS_DOT = `[^${ranges([[0x0a, 0x0a], [0x0d, 0x0d], [0x2028, 0x2029]])}]`;

/** One escape: a single code point, or a class escape. `i` is at the backslash. */
type Escaped = { cp: number; cls?: undefined; next: number } | { cls: ClassLetter; cp?: undefined; next: number };

class Translator {
  private i = 0;
  private out = '';
  /** Case-folding steps the compiled classes will cost re2js (see the header). */
  span = 0;
  /**
   * For an upper bound of the RE2 program (counted repetitions expanded), per open group: the size
   * of its finished alternatives, of the current one, and of the current one's last atom.
   */
  private readonly frames: Array<{ alts: number; cur: number; last: number }> = [{ alts: 0, cur: 0, last: 0 }];

  constructor(
    private readonly src: string,
    private readonly maxRepeat: number,
  ) {}

  run(): string {
    while (this.i < this.src.length) this.atom();
    return this.out;
  }

  /** Upper bound of the RE2 program size (RE2 may well compile to less: it factors alternations). */
  get size(): number {
    const f = this.frames[0]!;
    // The match instruction, capture 0 and the unanchored prefix.
    return f.alts + f.cur + 8;
  }

  private get frame(): { alts: number; cur: number; last: number } {
    return this.frames[this.frames.length - 1]!;
  }

  /** One instruction (a literal, a class, an assertion) or a closed group of `size`. */
  private unit(size = 1): void {
    this.frame.cur += size;
    this.frame.last = size;
  }

  /** The last atom `least` times, then `optional` more times each with the instruction that makes it optional (Infinity: a star). */
  private repeat(least: number, optional: number): void {
    const f = this.frame;
    const size = f.last * least + (optional === Infinity ? f.last + 1 : (f.last + 1) * optional);
    f.cur += size - f.last;
    f.last = size;
  }

  private atom(): void {
    const c = this.src[this.i]!;
    if (c === '\\') {
      const e = this.src[this.i + 1];
      this.unit();
      if (e === 'b' || e === 'B') {
        this.out += `\\${e}`;
        this.i += 2;
        return;
      }
      const esc = this.escape(false);
      if (esc.cls === 'S') this.out += `[^${ranges(JS_SPACE)}]`;
      else if (esc.cls !== undefined) this.out += `[${CLASS_ESCAPE[esc.cls]}]`;
      else this.out += char(esc.cp);
      this.i = esc.next;
    } else if (c === '[') {
      this.unit();
      this.charClass();
    } else if (c === '(') {
      this.frames.push({ alts: 0, cur: 0, last: 0 });
      this.group();
    } else if (c === '{') {
      this.brace();
    } else if ('^$|)*+?.'.includes(c)) {
      this.out += c === '.' ? JS_DOT : c;
      this.i++;
      if (c === '|') {
        this.frame.alts += this.frame.cur + 1;
        this.frame.cur = 0;
        this.frame.last = 0;
      } else if (c === ')') {
        const closed = this.frames.pop()!;
        this.unit(closed.alts + closed.cur + 1);
      } else if ('*+?'.includes(c)) {
        this.frame.cur += 1;
      } else {
        this.unit();
      }
    } else {
      this.unit();
      this.literal();
    }
  }

  /** A literal character, as a code point (a surrogate pair is one). */
  private literal(): void {
    const cp = this.src.codePointAt(this.i)!;
    if (cp >= 0xd800 && cp <= 0xdfff) throw new RegexRefused(`unsupported: a lone surrogate at position ${this.i}`);
    this.out += char(cp);
    this.i += cp > 0xffff ? 2 : 1;
  }

  private group(): void {
    const head = this.src.slice(this.i, this.i + 4);
    if (/^\(\?(?:=|!|<=|<!)/.test(head)) throw new RegexRefused(`unsupported: lookahead and lookbehind are not supported (position ${this.i})`);
    if (head.startsWith('(?:')) this.i += 3;
    else if (head.startsWith('(?<')) this.i = this.src.indexOf('>', this.i) + 1; // a name RegExp accepted
    else this.i += 1;
    this.out += '(?:';
  }

  /** `{n}`, `{n,}`, `{n,m}` after an atom is a quantifier (bounds checked); any other `{` a literal. */
  private brace(): void {
    const m = QUANTIFIER.exec(this.src.slice(this.i));
    if (!m) {
      this.unit();
      this.out += '\\{';
      this.i++;
      return;
    }
    for (const bound of [m[1], m[2]]) {
      if (bound && Number(bound) > this.maxRepeat) throw new RegexRefused(`unsupported: repetition ${m[0]} is above the limit of ${this.maxRepeat}`);
    }
    const least = Number(m[1]);
    this.repeat(least, m[2] === undefined ? 0 : m[2] === '' ? Infinity : Math.max(0, Number(m[2]) - least));
    this.out += m[0];
    this.i += m[0].length;
  }

  private charClass(): void {
    let j = this.i + 1;
    const negate = this.src[j] === '^';
    if (negate) j++;
    const items: Escaped[] = [];
    while (this.src[j] !== ']') {
      if (this.src[j] === '\\') {
        this.i = j;
        items.push(this.escape(true));
      } else {
        const cp = this.src.codePointAt(j)!;
        if (cp >= 0xd800 && cp <= 0xdfff) throw new RegexRefused(`unsupported: a lone surrogate at position ${j}`);
        items.push({ cp, next: j + (cp > 0xffff ? 2 : 1) });
      }
      j = items[items.length - 1]!.next;
    }
    this.i = j + 1;
    if (items.length === 0) {
      this.out += negate ? ANYTHING : NOTHING;
      return;
    }
    // Ranges and class escapes, Annex B applied: a "-" written `\-` is a literal, never a range,
    // and a range with a class escape at either end is both sets and a literal "-".
    const parts: Array<readonly [number, number] | ClassLetter> = [];
    for (let k = 0; k < items.length; k++) {
      const from = items[k]!;
      const dash = items[k + 1];
      const to = items[k + 2];
      if (dash?.cp === 0x2d && to !== undefined && this.src[from.next] !== '\\') {
        if (from.cls === undefined && to.cls === undefined) parts.push([from.cp, to.cp]);
        else parts.push(from.cls ?? [from.cp!, from.cp!], [0x2d, 0x2d], to.cls ?? [to.cp!, to.cp!]);
        k += 2;
        continue;
      }
      parts.push(from.cls ?? [from.cp!, from.cp!]);
    }
    if (parts.includes('S')) {
      // [\S…] is everything but the spaces the other parts leave out, [^\S…] those spaces. Case
      // folding joins no space to anything, so this holds case-insensitively too.
      let spaces: Array<readonly [number, number]> = [...JS_SPACE];
      for (const part of parts) {
        if (typeof part !== 'string') spaces = without(spaces, part[0], part[1]);
        else if (!SPACE_FREE[part]) spaces = [];
      }
      for (const [a, b] of spaces) this.span += foldSteps(a, b);
      if (spaces.length === 0) this.out += negate ? NOTHING : ANYTHING;
      else this.out += `[${negate ? '' : '^'}${ranges(spaces)}]`;
      return;
    }
    let body = '';
    for (const part of parts) {
      if (typeof part === 'string') {
        body += CLASS_ESCAPE[part as Exclude<ClassLetter, 'S'>];
        if (part === 's') for (const [a, b] of JS_SPACE) this.span += foldSteps(a, b);
        continue;
      }
      const [a, b] = part;
      this.span += foldSteps(a, b);
      body += a === b ? char(a) : `${char(a)}-${char(b)}`;
    }
    this.out += `[${negate ? '^' : ''}${body}]`;
  }

  /** The escape at this.i (a backslash); inside a class `\b` is backspace. */
  private escape(inClass: boolean): Escaped {
    const at = this.i;
    const e = this.src[at + 1];
    if (e === undefined) throw new RegexRefused('does not compile: \\ at end of pattern');
    if (Object.hasOwn(SPACE_FREE, e)) return { cls: e as ClassLetter, next: at + 2 };
    if (inClass && e === 'b') return { cp: 8, next: at + 2 };
    const control = CONTROL[e];
    if (control !== undefined) return { cp: control, next: at + 2 };
    if (/[1-9]/.test(e) || e === 'k') throw new RegexRefused(`unsupported: backreferences are not supported (\\${e} at position ${at})`);
    if (e === '0') {
      if (/[0-9]/.test(this.src[at + 2] ?? '')) throw new RegexRefused(`unsupported: octal escapes are not supported (position ${at})`);
      return { cp: 0, next: at + 2 };
    }
    if (e === 'c') {
      const letter = this.src[at + 2] ?? '';
      if (!/^[A-Za-z]$/.test(letter)) throw new RegexRefused(`unsupported: \\c must be followed by a letter (position ${at})`);
      return { cp: letter.charCodeAt(0) % 32, next: at + 3 };
    }
    if (e === 'x' || e === 'u') return this.hexEscape(e, at);
    if (SYNTAX.has(e) || !/[A-Za-z0-9]/.test(e)) {
      const cp = this.src.codePointAt(at + 1)!;
      return { cp, next: at + 1 + (cp > 0xffff ? 2 : 1) };
    }
    throw new RegexRefused(`unsupported: unknown escape \\${e} (position ${at})`);
  }

  private hexEscape(e: 'x' | 'u', at: number): Escaped {
    const digits = e === 'x' ? 2 : 4;
    const text = this.src.slice(at + 2, at + 2 + digits);
    if (!new RegExp(`^[0-9A-Fa-f]{${digits}}$`).test(text)) throw new RegexRefused(`unsupported: \\${e} needs ${digits} hex digits (position ${at})`);
    const unit = parseInt(text, 16);
    const next = at + 2 + digits;
    if (unit < 0xd800 || unit > 0xdfff) return { cp: unit, next };
    // RE2 matches code points: a surrogate pair written as two escapes is one character.
    const low = /^\\u(d[c-f][0-9a-f]{2})/i.exec(this.src.slice(next));
    if (unit <= 0xdbff && low) return { cp: 0x10000 + ((unit - 0xd800) << 10) + (parseInt(low[1]!, 16) - 0xdc00), next: next + 6 };
    throw new RegexRefused(`unsupported: a lone surrogate \\u${text} (position ${at})`);
  }
}

/**
 * RE2 syntax for `source`, a pattern `new RegExp(source, 'i')` accepts, the case-folding steps its
 * classes will cost to compile (`span`) and an upper bound of its program size (`size`), both known
 * before re2js spends anything on it; throws RegexRefused for backreferences, lookaround,
 * octal and unknown escapes, lone surrogates and `{n,m}` bounds above `maxRepeat`.
 */
export function toRe2Syntax(source: string, maxRepeat: number): { re2: string; span: number; size: number } {
  const translator = new Translator(source, maxRepeat);
  const re2 = translator.run();
  return { re2, span: translator.span, size: translator.size };
}
