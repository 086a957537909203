import { RE2JS, RE2JSException } from 're2js';
import { RegexRefused, toRe2Syntax } from './regex-syntax.js';

type RE2JSDfa = RE2JS['re2Input']['lazyDFA'];

export { RegexRefused } from './regex-syntax.js';

/**
 * How much lazily built DFA a compiled regex may keep between matches (re2js's own estimate, in
 * bytes). re2js keeps up to 8 MiB per pattern and a flow may hold thousands of patterns, so hostile
 * messages against state-hungry patterns could otherwise pin gigabytes; past this the cache is
 * dropped after the match and rebuilt on demand, which costs what building it cost the first time.
 */
const DFA_KEEP_BYTES = 64 * 1024;

/** How far the source's upper bound of the program may exceed `limits.program` before re2js is asked. */
const SIZE_BOUND_SLACK = 4;

/** What one pattern may cost: `{n,m}` bounds, RE2 instructions, case-folding steps of its classes. */
export interface RegexLimits {
  repeat: number;
  program: number;
  span: number;
}

/**
 * A flow regex. Flow regexes never run on JavaScript's backtracking engine: they run on re2js, a
 * port of RE2, whose automata answer in time linear in the input whatever the pattern, so
 * `(a+)+$` against a hostile message costs what `a+$` does. Patterns are written in JavaScript
 * syntax and always match case-insensitively; `regex-syntax.ts` carries them over to RE2 syntax
 * with their JavaScript meaning.
 */
export class SafeRegex {
  private constructor(
    readonly source: string,
    private readonly re: RE2JS,
    /** Case-folding steps its classes cost to compile, the measure `limits.span` bounds. */
    readonly span: number,
  ) {}

  /**
   * Checks and compiles `source`; throws RegexRefused with a reason when it is not valid
   * JavaScript, uses something RE2 cannot run in linear time (backreferences, lookaround), repeats
   * `{n,m}` more than `limits.repeat` times, compiles to more than `limits.program` RE2
   * instructions (counted repetition is expanded, so `(?:abcdefghij){100}` is about 1,000), or has
   * classes whose case folding costs more than `limits.span` steps (regex-syntax.ts). The last two
   * are checked on the source first, so a refused pattern costs re2js little: a 477-character one
   * expanded to 460,002 instructions in 320 ms before this.
   */
  static compile(source: string, limits: RegexLimits): SafeRegex {
    try {
      new RegExp(source, 'i');
    } catch (err) {
      throw new RegexRefused(`does not compile: ${err instanceof Error ? err.message : String(err)}`);
    }
    const translated = toRe2Syntax(source, limits.repeat);
    if (translated.span > limits.span) {
      throw new RegexRefused(`character ranges are too wide: case-insensitive matching has to fold ${translated.span} characters (limit ${limits.span}; classes that cover everything, such as [^] or \\S, and negated small classes cost nothing)`);
    }
    // The bound is generous (RE2 factors alternations); past a few times the limit the real size
    // is not worth computing.
    if (translated.size > limits.program * SIZE_BOUND_SLACK) {
      throw new RegexRefused(`pattern is too large once repetitions are expanded (up to ${translated.size} steps, limit ${limits.program})`);
    }
    let re: RE2JS;
    try {
      re = RE2JS.compile(translated.re2, RE2JS.CASE_INSENSITIVE);
    } catch (err) {
      // Valid JavaScript that RE2 still will not take, such as nesting whose expansion exceeds
      // RE2's own repetition limit.
      if (err instanceof RE2JSException) throw new RegexRefused(`unsupported by the linear-time engine: ${err.message.replace(/^error parsing regexp: /, '')}`);
      throw err;
    }
    if (re.programSize() > limits.program) {
      throw new RegexRefused(`pattern is too large once repetitions are expanded (${re.programSize()} steps, limit ${limits.program})`);
    }
    return new SafeRegex(source, re, translated.span);
  }

  /** RE2 program size, the measure `limits.program` bounds. */
  get size(): number {
    return this.re.programSize();
  }

  /** Does the pattern match anywhere in `text`. */
  test(text: string): boolean {
    const matched = this.re.test(text);
    if (this.cachedBytes > DFA_KEEP_BYTES) this.re.re2().lazyDFA.clearCache();
    return matched;
  }

  /** re2js's estimate of the DFA it keeps cached for this pattern. */
  get cachedBytes(): number {
    // `lazyDFA` is null until the first DFA match, whatever its declared type says.
    const dfa = this.re.re2().lazyDFA as RE2JSDfa | null;
    return dfa === null ? 0 : dfa.stateBudget - dfa.memBudget;
  }
}
