/**
 * Sets of UTF-16 code units as sorted, disjoint, non-adjacent inclusive ranges. The regex parser
 * builds every character matcher as one; the safety check intersects them, the matcher looks code
 * units up by binary search.
 */
export type CharSet = ReadonlyArray<readonly [number, number]>;

const MAX_UNIT = 0xffff;

export function normalise(ranges: Iterable<readonly [number, number]>): CharSet {
  const sorted = [...ranges].filter(([a, b]) => a <= b).sort((x, y) => x[0] - y[0]);
  const out: Array<[number, number]> = [];
  for (const [a, b] of sorted) {
    const last = out[out.length - 1];
    if (last && a <= last[1] + 1) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

export function single(unit: number): CharSet {
  return [[unit, unit]];
}

export function union(...sets: CharSet[]): CharSet {
  return normalise(sets.flat());
}

export function complement(set: CharSet): CharSet {
  const out: Array<[number, number]> = [];
  let from = 0;
  for (const [a, b] of set) {
    if (a > from) out.push([from, a - 1]);
    from = b + 1;
  }
  if (from <= MAX_UNIT) out.push([from, MAX_UNIT]);
  return out;
}

export function intersects(x: CharSet, y: CharSet): boolean {
  let i = 0;
  let j = 0;
  while (i < x.length && j < y.length) {
    const [a1, b1] = x[i]!;
    const [a2, b2] = y[j]!;
    if (a1 <= b2 && a2 <= b1) return true;
    if (b1 < b2) i++;
    else j++;
  }
  return false;
}

export function has(set: CharSet, unit: number): boolean {
  let lo = 0;
  let hi = set.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [a, b] = set[mid]!;
    if (unit < a) hi = mid - 1;
    else if (unit > b) lo = mid + 1;
    else return true;
  }
  return false;
}

/**
 * JavaScript's case folding for a regex with the `i` flag and no `u` flag: a unit maps to its
 * upper case when that is one unit and does not take a non-ASCII unit into ASCII.
 */
export function canonicalise(unit: number): number {
  const upper = String.fromCharCode(unit).toUpperCase();
  if (upper.length !== 1) return unit;
  const u = upper.charCodeAt(0);
  return unit >= 128 && u < 128 ? unit : u;
}

/** Ranges larger than this are folded only in their ASCII part (they hold nearly everything). */
const FOLD_SCAN_LIMIT = 4_096;

/**
 * Adds every unit that folds to the same canonical unit as a member, so that membership of the
 * input unit alone answers the case-insensitive question. Applied before negation, as JS does.
 */
export function foldCase(set: CharSet): CharSet {
  const extra: Array<[number, number]> = [];
  for (const [a, b] of set) {
    // ASCII letters fold in blocks.
    const lo = Math.max(a, 0x41);
    const hi = Math.min(b, 0x5a);
    if (lo <= hi) extra.push([lo + 32, hi + 32]);
    const lo2 = Math.max(a, 0x61);
    const hi2 = Math.min(b, 0x7a);
    if (lo2 <= hi2) extra.push([lo2 - 32, hi2 - 32]);
    if (b < 128 || b - a > FOLD_SCAN_LIMIT) continue;
    for (let u = Math.max(a, 128); u <= b; u++) {
      const c = canonicalise(u);
      if (c !== u) extra.push([c, c]);
      // Siblings: lower cases of the unit and of its canonical form that fold to the same unit.
      for (const v of [u, c]) {
        const lower = String.fromCharCode(v).toLowerCase();
        if (lower.length !== 1) continue;
        const l = lower.charCodeAt(0);
        if (l !== u && canonicalise(l) === c) extra.push([l, l]);
      }
    }
  }
  return extra.length ? union(set, extra) : set;
}

const r = (a: string, b = a): [number, number] => [a.charCodeAt(0), b.charCodeAt(0)];

export const DIGIT: CharSet = normalise([r('0', '9')]);
export const WORD: CharSet = normalise([r('0', '9'), r('A', 'Z'), r('_'), r('a', 'z')]);
/** ECMAScript WhiteSpace and LineTerminator. */
export const SPACE: CharSet = normalise([
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
]);
export const LINE_TERMINATOR: CharSet = normalise([[0x0a, 0x0a], [0x0d, 0x0d], [0x2028, 0x2029]]);
/** `.` without the `s` flag. */
export const DOT: CharSet = complement(LINE_TERMINATOR);
