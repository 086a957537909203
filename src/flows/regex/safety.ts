import { intersects, union, type CharSet } from './charset.js';
import type { RegexNode } from './parse.js';

/**
 * A static check for the patterns that make a backtracking engine (JavaScript's own) take
 * exponential time: a repeated part that can match the same text in more than one way. It is
 * conservative: it refuses some harmless patterns such as `(\d{1,3}\.)+`.
 *
 * Refused under a quantifier whose maximum is above 1:
 * - another variable quantifier (`(a+)+`, `(\w+\s?)*`, `(a{1,3})*`): nested quantifiers;
 * - a body that can match the empty text (`(a?)*` is covered above, `(|a)+`, `(\b)*`);
 * - an alternation whose branches can start with the same character, or one of which can match the
 *   empty text (`(a|ab)+`, `(\w|\d)*`, `(yes|y)+`).
 *
 * Returns a reason, or null when the pattern passes.
 */
export function catastrophicReason(node: RegexNode): string | null {
  switch (node.kind) {
    case 'empty':
    case 'char':
    case 'assert':
      return null;
    case 'seq':
      return first(node.items.map(catastrophicReason));
    case 'alt':
      return first(node.alts.map(catastrophicReason));
    case 'repeat': {
      if (node.max > 1) {
        const inner = variableQuantifier(node.body);
        if (inner) return `nested quantifier: ${inner} inside ${node.source} could backtrack catastrophically`;
        if (nullable(node.body)) return `${node.source} repeats something that can match empty text`;
        const ambiguous = ambiguousAlternation(node.body);
        if (ambiguous) return `alternation under ${node.source} is ambiguous (${ambiguous}) and could backtrack catastrophically`;
      }
      return catastrophicReason(node.body);
    }
  }
}

function first(reasons: Array<string | null>): string | null {
  return reasons.find((r) => r !== null) ?? null;
}

function variableQuantifier(node: RegexNode): string | null {
  switch (node.kind) {
    case 'seq':
      return first(node.items.map(variableQuantifier));
    case 'alt':
      return first(node.alts.map(variableQuantifier));
    case 'repeat':
      return node.max !== node.min ? node.source : variableQuantifier(node.body);
    default:
      return null;
  }
}

export function nullable(node: RegexNode): boolean {
  switch (node.kind) {
    case 'empty':
    case 'assert':
      return true;
    case 'char':
      return false;
    case 'seq':
      return node.items.every(nullable);
    case 'alt':
      return node.alts.some(nullable);
    case 'repeat':
      return node.min === 0 || nullable(node.body);
  }
}

/** The characters a match of `node` can start with. */
export function firstChars(node: RegexNode): CharSet {
  switch (node.kind) {
    case 'empty':
    case 'assert':
      return [];
    case 'char':
      return node.set;
    case 'alt':
      return union(...node.alts.map(firstChars));
    case 'repeat':
      return firstChars(node.body);
    case 'seq': {
      const sets: CharSet[] = [];
      for (const item of node.items) {
        sets.push(firstChars(item));
        if (!nullable(item)) break;
      }
      return union(...sets);
    }
  }
}

function ambiguousAlternation(node: RegexNode): string | null {
  switch (node.kind) {
    case 'seq':
      return first(node.items.map(ambiguousAlternation));
    case 'repeat':
      return ambiguousAlternation(node.body);
    case 'alt': {
      if (node.alts.some(nullable)) return 'a branch can match empty text';
      const sets = node.alts.map(firstChars);
      for (let i = 0; i < sets.length; i++) {
        for (let j = i + 1; j < sets.length; j++) {
          if (intersects(sets[i]!, sets[j]!)) return `branches ${i + 1} and ${j + 1} can start with the same character`;
        }
      }
      return first(node.alts.map(ambiguousAlternation));
    }
    default:
      return null;
  }
}
