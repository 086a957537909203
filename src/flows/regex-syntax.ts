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
const ranges = (list: ReadonlyArray<readonly [number, number]>): string => list.map(([a, b]) => (a === b ? hex(a) : `${hex(a)}-${hex(b)}`)).join('');

function complement(list: ReadonlyArray<readonly [number, number]>): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let from = 0;
  for (const [a, b] of list) {
    if (a > from) out.push([from, a - 1]);
    from = b + 1;
  }
  if (from <= MAX_CODE_POINT) out.push([from, MAX_CODE_POINT]);
  return out;
}

/** Class contents (no brackets) for the JavaScript class escapes; \d and \w mean the same in RE2. */
const CLASS_ESCAPE: Record<string, string> = { d: '\\d', D: '\\D', w: '\\w', W: '\\W', s: ranges(JS_SPACE), S: ranges(complement(JS_SPACE)) };
const CONTROL: Record<string, number> = { t: 9, n: 10, v: 11, f: 12, r: 13 };
/** Characters JavaScript lets a backslash quote outside the u flag that are syntax somewhere. */
const SYNTAX = new Set('^$\\.*+?()[]{}|/-'.split(''));
const QUANTIFIER = /^\{(\d+)(?:,(\d*))?\}/;
const JS_DOT = `[^${ranges([[0x0a, 0x0a], [0x0d, 0x0d], [0x2028, 0x2029]])}]`;

/** One escape: a single code point, or a class escape's contents. `i` is at the backslash. */
type Escaped = { cp: number; set?: undefined; next: number } | { set: string; cp?: undefined; next: number };

class Translator {
  private i = 0;
  private out = '';

  constructor(
    private readonly src: string,
    private readonly maxRepeat: number,
  ) {}

  run(): string {
    while (this.i < this.src.length) this.atom();
    return this.out;
  }

  private atom(): void {
    const c = this.src[this.i]!;
    if (c === '\\') {
      const e = this.src[this.i + 1];
      if (e === 'b' || e === 'B') {
        this.out += `\\${e}`;
        this.i += 2;
        return;
      }
      const esc = this.escape(false);
      this.out += esc.set !== undefined ? `[${esc.set}]` : hex(esc.cp);
      this.i = esc.next;
    } else if (c === '[') {
      this.charClass();
    } else if (c === '(') {
      this.group();
    } else if (c === '{') {
      this.brace();
    } else if (c === '.') {
      this.out += JS_DOT;
      this.i++;
    } else if ('^$|)*+?'.includes(c)) {
      this.out += c;
      this.i++;
    } else {
      this.literal();
    }
  }

  /** A literal character, as a code point (a surrogate pair is one). */
  private literal(): void {
    const cp = this.src.codePointAt(this.i)!;
    if (cp >= 0xd800 && cp <= 0xdfff) throw new RegexRefused(`unsupported: a lone surrogate at position ${this.i}`);
    this.out += hex(cp);
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
      this.out += '\\{';
      this.i++;
      return;
    }
    for (const bound of [m[1], m[2]]) {
      if (bound && Number(bound) > this.maxRepeat) throw new RegexRefused(`unsupported: repetition ${m[0]} is above the limit of ${this.maxRepeat}`);
    }
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
      this.out += negate ? `[${hex(0)}-${hex(MAX_CODE_POINT)}]` : `[^${hex(0)}-${hex(MAX_CODE_POINT)}]`;
      return;
    }
    let body = '';
    for (let k = 0; k < items.length; k++) {
      const from = items[k]!;
      const dash = items[k + 1];
      const to = items[k + 2];
      // A "-" written `\-` is a literal, never a range.
      if (dash?.cp === 0x2d && to !== undefined && this.src[from.next] !== '\\') {
        // Annex B: a range with a class escape at either end is both sets and a literal "-".
        body += from.set === undefined && to.set === undefined ? `${hex(from.cp)}-${hex(to.cp)}` : `${from.set ?? hex(from.cp!)}${hex(0x2d)}${to.set ?? hex(to.cp!)}`;
        k += 2;
        continue;
      }
      body += from.set ?? hex(from.cp!);
    }
    this.out += `[${negate ? '^' : ''}${body}]`;
  }

  /** The escape at this.i (a backslash); inside a class `\b` is backspace. */
  private escape(inClass: boolean): Escaped {
    const at = this.i;
    const e = this.src[at + 1];
    if (e === undefined) throw new RegexRefused('does not compile: \\ at end of pattern');
    const set = CLASS_ESCAPE[e];
    if (set !== undefined) return { set, next: at + 2 };
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
 * RE2 syntax for `source`, a pattern `new RegExp(source, 'i')` accepts; throws RegexRefused for
 * backreferences, lookaround, octal and unknown escapes, lone surrogates and `{n,m}` bounds above
 * `maxRepeat`.
 */
export function toRe2Syntax(source: string, maxRepeat: number): string {
  return new Translator(source, maxRepeat).run();
}
