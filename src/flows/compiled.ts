import { createHash } from 'node:crypto';
import { MAX_MATCH_INPUT, type Flow, type Rule } from './types.js';
import { validateFlow } from './validate.js';

/**
 * A rule ready for trimmed inbound text: equals, contains and any are tested here, a regex is
 * handed with the node's other regexes to the matching worker (regex-matcher.ts).
 */
export type CompiledRule = { test(text: string): boolean; regex?: undefined; next: string | undefined } | { regex: string; test?: undefined; next: string | undefined };

/** A validated flow with its rules ready and its content revision. */
export interface CompiledFlow {
  flow: Flow;
  revision: string;
  rules: ReadonlyMap<string, readonly CompiledRule[]>;
}

/** Revision of a flow: a hash of its content, so setting the same flow again changes nothing. */
export function flowRevision(flow: Flow): string {
  return createHash('sha256').update(JSON.stringify(flow)).digest('hex').slice(0, 16);
}

function compileRule(rule: Rule): CompiledRule {
  const next = rule.next;
  if ('any' in rule) return { test: () => true, next };
  if ('equals' in rule) {
    const want = rule.equals.trim().toLowerCase();
    return { test: (t) => t.toLowerCase() === want, next };
  }
  if ('contains' in rule) {
    const want = rule.contains.trim().toLowerCase();
    return { test: (t) => t.toLowerCase().includes(want), next };
  }
  return { regex: rule.regex, next };
}

/** Validates (again: the file may have been edited by hand) and compiles a flow document. */
export function compileFlow(input: unknown): CompiledFlow {
  const flow = validateFlow(input);
  const rules = new Map<string, CompiledRule[]>();
  for (const [id, node] of Object.entries(flow.nodes)) {
    if (node.type === 'condition') rules.set(id, node.rules.map(compileRule));
  }
  return { flow, revision: flowRevision(flow), rules };
}

/** What matchers see: the text (or caption) trimmed and cut to MAX_MATCH_INPUT units. */
export function matchInput(text: string | undefined): string {
  return (text ?? '').trim().slice(0, MAX_MATCH_INPUT);
}

/** Fills {{name}} and {{phone}}; the validator has refused any other variable. */
export function renderTemplate(text: string, vars: { name: string; phone: string }): string {
  return text.replace(/\{\{\s*(name|phone)\s*\}\}/g, (_m, v: string) => (v === 'name' ? vars.name : vars.phone));
}
