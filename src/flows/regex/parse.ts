import { DIGIT, DOT, SPACE, WORD, complement, foldCase, single, union, type CharSet } from './charset.js';

/**
 * A parser for the regular subset of JavaScript regex syntax that flows accept (no flags; matching
 * is always case-insensitive): literals, escapes, classes, `.`, `^`, `$`, `\b`, `\B`, groups,
 * alternation and the quantifiers `* + ? {n} {n,} {n,m}` (lazy or not: only "does it match" is
 * asked). Backreferences and lookaround are refused: they are what makes a regex non-regular.
 */
export type RegexNode =
  | { kind: 'empty' }
  | { kind: 'char'; set: CharSet }
  | { kind: 'assert'; what: 'start' | 'end' | 'word' | 'notWord' }
  | { kind: 'seq'; items: RegexNode[] }
  | { kind: 'alt'; alts: RegexNode[] }
  | { kind: 'repeat'; body: RegexNode; min: number; max: number; source: string };

export class RegexSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RegexSyntaxError';
  }
}

const CLASS_ESCAPES: Record<string, CharSet> = {
  d: DIGIT,
  D: complement(DIGIT),
  w: WORD,
  W: complement(WORD),
  s: SPACE,
  S: complement(SPACE),
};

const CONTROL_ESCAPES: Record<string, number> = { t: 9, n: 10, v: 11, f: 12, r: 13 };

/** Characters that may be escaped to stand for themselves. */
const SYNTAX = new Set('^$\\.*+?()[]{}|/-'.split(''));

export class RegexParser {
  private pos = 0;

  constructor(
    private readonly src: string,
    private readonly maxRepeat: number,
  ) {}

  parse(): RegexNode {
    const node = this.alternation();
    if (this.pos < this.src.length) throw this.fail(`unexpected "${this.src[this.pos]}"`);
    return node;
  }

  private fail(message: string): RegexSyntaxError {
    return new RegexSyntaxError(`${message} at position ${this.pos}`);
  }

  private peek(offset = 0): string | undefined {
    return this.src[this.pos + offset];
  }

  private alternation(): RegexNode {
    const alts = [this.sequence()];
    while (this.peek() === '|') {
      this.pos++;
      alts.push(this.sequence());
    }
    return alts.length === 1 ? alts[0]! : { kind: 'alt', alts };
  }

  private sequence(): RegexNode {
    const items: RegexNode[] = [];
    while (this.pos < this.src.length && this.peek() !== '|' && this.peek() !== ')') {
      const start = this.pos;
      const atom = this.atom();
      items.push(this.quantified(atom, start));
    }
    if (items.length === 0) return { kind: 'empty' };
    return items.length === 1 ? items[0]! : { kind: 'seq', items };
  }

  private quantified(atom: RegexNode, start: number): RegexNode {
    let min: number;
    let max: number;
    const c = this.peek();
    if (c === '*' || c === '+' || c === '?') {
      this.pos++;
      [min, max] = c === '*' ? [0, Infinity] : c === '+' ? [1, Infinity] : [0, 1];
    } else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.pos));
      if (!m) return atom; // Annex B: a "{" that is no quantifier is a literal.
      this.pos += m[0].length;
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
      if (min > this.maxRepeat || (max !== Infinity && max > this.maxRepeat)) {
        throw this.fail(`repetition {${m[1]}${m[2] ?? ''}} is above the limit of ${this.maxRepeat}`);
      }
      if (max < min) throw this.fail('numbers out of order in {} quantifier');
    } else {
      return atom;
    }
    if (this.peek() === '?') this.pos++; // lazy: the same language
    if (atom.kind === 'assert') throw this.fail('nothing to repeat');
    if (this.peek() === '*' || this.peek() === '+' || this.peek() === '?' || (this.peek() === '{' && /^\{\d/.test(this.src.slice(this.pos)))) {
      throw this.fail('nothing to repeat');
    }
    return { kind: 'repeat', body: atom, min, max, source: this.src.slice(start, this.pos) };
  }

  private atom(): RegexNode {
    const c = this.peek()!;
    switch (c) {
      case '^':
        this.pos++;
        return { kind: 'assert', what: 'start' };
      case '$':
        this.pos++;
        return { kind: 'assert', what: 'end' };
      case '.':
        this.pos++;
        return { kind: 'char', set: DOT };
      case '(':
        return this.group();
      case '[':
        return { kind: 'char', set: this.charClass() };
      case '\\':
        return this.atomEscape();
      case '*':
      case '+':
      case '?':
        throw this.fail('nothing to repeat');
      case ')':
        throw this.fail('unmatched ")"');
      default:
        this.pos++;
        return { kind: 'char', set: foldCase(single(c.charCodeAt(0))) };
    }
  }

  private group(): RegexNode {
    this.pos++;
    if (this.peek() === '?') {
      const two = this.src.slice(this.pos, this.pos + 3);
      if (two.startsWith('?:')) {
        this.pos += 2;
      } else if (two === '?<=' || two === '?<!' || two.startsWith('?=') || two.startsWith('?!')) {
        throw this.fail('lookahead and lookbehind are not supported');
      } else if (two.startsWith('?<')) {
        const m = /^\?<([A-Za-z_$][A-Za-z0-9_$]*)>/.exec(this.src.slice(this.pos));
        if (!m) throw this.fail('invalid group name');
        this.pos += m[0].length;
      } else {
        throw this.fail('invalid group');
      }
    }
    const body = this.alternation();
    if (this.peek() !== ')') throw this.fail('unterminated group');
    this.pos++;
    return body;
  }

  private atomEscape(): RegexNode {
    const e = this.peek(1);
    if (e === undefined) throw this.fail('\\ at end of pattern');
    if (e === 'b' || e === 'B') {
      this.pos += 2;
      return { kind: 'assert', what: e === 'b' ? 'word' : 'notWord' };
    }
    if (/[1-9]/.test(e) || e === 'k') throw this.fail('backreferences are not supported');
    return { kind: 'char', set: foldCase(this.escapeSet(false)) };
  }

  /**
   * An escape after "\" (pos at the backslash) as a set, not yet case-folded; inside a class
   * `\b` is backspace.
   */
  private escapeSet(inClass: boolean): CharSet {
    const e = this.peek(1)!;
    this.pos += 2;
    const cls = CLASS_ESCAPES[e];
    if (cls) return cls;
    if (inClass && e === 'b') return single(8);
    const control = CONTROL_ESCAPES[e];
    if (control !== undefined) return single(control);
    if (e === '0') {
      if (/[0-9]/.test(this.peek() ?? '')) throw this.fail('octal escapes are not supported');
      return single(0);
    }
    if (e === 'c') {
      const letter = this.peek();
      if (!letter || !/[A-Za-z]/.test(letter)) throw this.fail('\\c must be followed by a letter');
      this.pos++;
      return single(letter.charCodeAt(0) % 32);
    }
    if (e === 'x' || e === 'u') {
      const digits = e === 'x' ? 2 : 4;
      const hex = this.src.slice(this.pos, this.pos + digits);
      if (!new RegExp(`^[0-9A-Fa-f]{${digits}}$`).test(hex)) throw this.fail(`\\${e} needs ${digits} hex digits`);
      this.pos += digits;
      return single(parseInt(hex, 16));
    }
    if (inClass && /[1-9]/.test(e)) throw this.fail('octal escapes are not supported');
    if (SYNTAX.has(e) || !/[A-Za-z0-9]/.test(e)) return single(e.charCodeAt(0));
    throw this.fail(`unsupported escape \\${e}`);
  }

  private charClass(): CharSet {
    this.pos++;
    let negate = false;
    if (this.peek() === '^') {
      negate = true;
      this.pos++;
    }
    const parts: CharSet[] = [];
    for (;;) {
      const c = this.peek();
      if (c === undefined) throw this.fail('unterminated character class');
      if (c === ']') {
        this.pos++;
        break;
      }
      const from = this.classAtom();
      if (this.peek() === '-' && this.peek(1) !== ']' && this.peek(1) !== undefined) {
        this.pos++;
        const to = this.classAtom();
        if (from.unit !== null && to.unit !== null) {
          if (to.unit < from.unit) throw this.fail('range out of order in character class');
          parts.push([[from.unit, to.unit]]);
          continue;
        }
        // Annex B: a range with a class escape on either side is the two sets and a literal "-".
        parts.push(from.set, to.set, single(0x2d));
        continue;
      }
      parts.push(from.set);
    }
    const set = foldCase(union(...parts));
    return negate ? complement(set) : set;
  }

  private classAtom(): { set: CharSet; unit: number | null } {
    const c = this.peek()!;
    if (c === '\\') {
      const e = this.peek(1);
      if (e === undefined) throw this.fail('\\ at end of pattern');
      const isClass = Object.hasOwn(CLASS_ESCAPES, e);
      const set = this.escapeSet(true);
      return { set, unit: isClass ? null : set[0]![0] };
    }
    this.pos++;
    const unit = c.charCodeAt(0);
    return { set: single(unit), unit };
  }
}

/** Parses `src` (no flags) into the subset's syntax tree; throws RegexSyntaxError. */
export function parseRegex(src: string, maxRepeat: number): RegexNode {
  return new RegexParser(src, maxRepeat).parse();
}
