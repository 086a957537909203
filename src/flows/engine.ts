import { renderTemplate, type CompiledFlow, type CompiledRule } from './compiled.js';
import type { MatchOutcome } from './regex-matcher.js';
import type { FlowNode } from './types.js';

/** What one inbound message makes the bot do, before anything is sent or stored. */
export interface RunPlan {
  /** Texts to send, in order. */
  sends: string[];
  /** Where the next inbound message starts (null: at `start`). */
  position: string | null;
  /** Set when the run reached a handover node. */
  handover: { node: string } | null;
  /** The run hit the step cap (a defence; validation should make it unreachable). */
  capped: boolean;
  /**
   * Set when the node's regexes got no full answer: the time budget ran out while rule `rule` was
   * tried, or the matching worker failed. That rule and the regex rules after it counted as not
   * matched.
   */
  regexTrouble: { node: string; rule: number; kind: 'budget' } | { node: string; rule: number; kind: 'failed'; reason: string } | null;
}

/** The first of `patterns` that matches `text` (regex-matcher.ts, bound to the instance). */
export type FirstMatch = (patterns: readonly string[], text: string) => Promise<MatchOutcome>;

/** Steps one inbound message may take; validation keeps real flows far below it. */
export const MAX_STEPS = 64;

/**
 * The rule of a condition node that `text` takes: the first that matches, in order. The cheap
 * matchers are tried here; the regex rules before the first cheap match go to the worker together.
 */
async function choose(id: string, rules: readonly CompiledRule[], text: string, firstMatch: FirstMatch): Promise<{ hit: number | null; trouble: RunPlan['regexTrouble'] }> {
  const cheap = rules.findIndex((r) => r.test !== undefined && r.test(text));
  const end = cheap === -1 ? rules.length : cheap;
  const regexAt: number[] = [];
  for (let i = 0; i < end; i++) if (rules[i]!.regex !== undefined) regexAt.push(i);
  const fallback = cheap === -1 ? null : cheap;
  if (regexAt.length === 0) return { hit: fallback, trouble: null };
  const outcome = await firstMatch(regexAt.map((i) => rules[i]!.regex!), text);
  switch (outcome.kind) {
    case 'matched':
      return { hit: regexAt[outcome.index]!, trouble: null };
    case 'none':
      return { hit: fallback, trouble: null };
    case 'budget':
      return { hit: fallback, trouble: { node: id, rule: regexAt[outcome.at] ?? regexAt[0]!, kind: 'budget' } };
    case 'failed':
      return { hit: fallback, trouble: { node: id, rule: regexAt[0]!, kind: 'failed', reason: outcome.reason } };
  }
}

/**
 * Runs the flow for one inbound message. The run starts at the conversation's position (or
 * `start`); if that node is a condition it evaluates the message. Message nodes send and move on;
 * any later condition node stops the run and waits there for the next message; a handover sends
 * its text and mutes the chat; a missing target ends the flow.
 */
export async function runFlow(compiled: CompiledFlow, position: string | null, input: { text: string; name: string; phone: string }, firstMatch: FirstMatch): Promise<RunPlan> {
  const { flow } = compiled;
  const plan: RunPlan = { sends: [], position: null, handover: null, capped: false, regexTrouble: null };
  const vars = { name: input.name, phone: input.phone };
  let id: string | undefined = position !== null && Object.hasOwn(flow.nodes, position) ? position : flow.start;
  for (let step = 0; id !== undefined; step++) {
    if (step >= MAX_STEPS) {
      plan.capped = true;
      plan.position = null;
      return plan;
    }
    const node: FlowNode = flow.nodes[id]!;
    switch (node.type) {
      case 'message':
        plan.sends.push(renderTemplate(node.text, vars));
        id = node.next;
        break;
      case 'condition': {
        if (step > 0) {
          plan.position = id;
          return plan;
        }
        const rules = compiled.rules.get(id) ?? [];
        const { hit, trouble } = await choose(id, rules, input.text, firstMatch);
        plan.regexTrouble = trouble;
        id = hit === null ? node.else : rules[hit]!.next;
        break;
      }
      case 'handover':
        if (node.text !== undefined) plan.sends.push(renderTemplate(node.text, vars));
        plan.handover = { node: id };
        plan.position = node.next ?? null;
        return plan;
    }
  }
  return plan;
}
