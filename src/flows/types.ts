export type { Rule, MessageNode, ConditionNode, HandoverNode, FlowNode, Flow, Conversation, Handover, StoredFlow } from '../schemas/flow.js';
export { ConversationRecord, HandoverRecord, StoredFlowRecord } from '../schemas/flow.js';

/**
 * The flow document's limits. Its types and the state kept per conversation and handover are
 * schemas (src/schemas/flow.ts), re-exported here for the feature. Pure types and limits: no I/O.
 */

/** Limits a flow document must respect; the validator names the node that breaks one. */
export const FLOW_LIMITS = {
  nodes: 200,
  nodeId: 64,
  name: 100,
  description: 1_000,
  text: 4_096,
  rules: 50,
  matcher: 1_000,
  regexSource: 500,
  /** Bounds of `{n,m}` in a regex. */
  regexRepeat: 100,
  /** Compiled regex program size in RE2 instructions (counted repetition expanded). */
  regexProgram: 2_000,
  /**
   * Case-folding steps a regex's character classes cost to compile (regex-syntax.ts): about 30 ns
   * each warm, so `[\x80-\uffff]` (65,408) is 2 ms.
   */
  regexSpan: 70_000,
  /**
   * RE2 instructions of all the regexes of one condition node. A message is matched against one
   * node's rules; where re2js's DFA gives up (a pattern such as `[ab]*a[ab]{99}q`) matching costs
   * up to ~90 ns per input character and instruction, so 5,000 is ~1.8 s for 4,096 characters
   * (cut off by matchBudgetMs) where issue 21's 49 rules of 1,249 took 13.7 s.
   */
  regexNodeProgram: 5_000,
  // What saving or loading a flow compiles, on the event loop, is bounded by the next four.
  // Measured warm on a shared 2-core machine: ~0.25 µs per instruction a repetition expands,
  // 1-5 µs per character of source (classes such as \S or `.` are the dearest), 0.1-0.2 ms per
  // regex, ~30 ns per case-folding step.
  /** RE2 instructions of all the regexes of a flow. */
  regexFlowProgram: 50_000,
  /** Characters of all the regexes of a flow. */
  regexFlowSource: 20_000,
  /** Case-folding steps of all the regexes of a flow (regexSpan). */
  regexFlowSpan: 500_000,
  /** Regex rules in a flow. */
  regexes: 200,
  /**
   * Time the matching worker may spend on one message's regexes (milliseconds); past it the rule
   * being tried and the regex rules after it count as not matched.
   */
  matchBudgetMs: 200,
  /** Message nodes one inbound message may send in a row (including a handover's text). */
  messageChain: 10,
} as const;

/**
 * Inbound text is cut to this many UTF-16 units before any matcher runs, so a 64 KiB hostile
 * message costs no more than a 4 KiB one.
 */
export const MAX_MATCH_INPUT = 4_096;

