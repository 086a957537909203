import type { TSchema } from 'typebox';
import { GatewayError } from '../domain/errors.js';
import { isRecord } from '../domain/guards.js';
import { issues } from '../schemas/check.js';
import { RegexRefused, SafeRegex, type RegexLimits } from './safe-regex.js';
import { FlowShape, NODE_SCHEMAS, RULE_SCHEMAS } from './node-schemas.js';
import { FLOW_LIMITS, type Flow, type FlowNode, type Rule } from './types.js';

/**
 * A flow document that breaks the contract (INVALID_FIELD); the message starts with the node (or
 * field) at fault, and the error body names the node in `error.node`.
 */
export class FlowValidationError extends GatewayError {
  readonly node: string | null;
  constructor(message: string, node: string | null = null) {
    super('INVALID_FIELD', node === null ? message : `node "${node}": ${message}`, node === null ? undefined : { detail: { node } });
    this.name = 'FlowValidationError';
    this.node = node;
  }
}

const NODE_ID = new RegExp(`^[A-Za-z0-9_.-]{1,${FLOW_LIMITS.nodeId}}$`);
export const TEMPLATE_VARIABLES = ['name', 'phone'] as const;
const TEMPLATE = /\{\{\s*([^{}]*?)\s*\}\}/g;
const MATCHERS = ['equals', 'contains', 'regex', 'any'] as const;

const REGEX_LIMITS: RegexLimits = { repeat: FLOW_LIMITS.regexRepeat, program: FLOW_LIMITS.regexProgram, span: FLOW_LIMITS.regexSpan };

/** What the regexes seen so far add up to, in the flow and in the condition node being read. */
interface RegexTally {
  count: number;
  source: number;
  program: number;
  span: number;
  nodeProgram: number;
}

/**
 * What compiling a regex costs (program size, case-folding steps), or why it is refused, by source.
 * A flow is validated up to three times on its way in (route, store, compile) and again when it is
 * loaded; each regex is compiled once. Bounded: a hostile caller sends distinct sources.
 */
const regexCosts = new Map<string, { size: number; span: number } | { refused: string }>();
const REGEX_COSTS_KEPT = 2_000;

function regexCost(source: string): { size: number; span: number } | { refused: string } {
  let cost = regexCosts.get(source);
  if (cost === undefined) {
    try {
      const re = SafeRegex.compile(source, REGEX_LIMITS);
      cost = { size: re.size, span: re.span };
    } catch (err) {
      if (!(err instanceof RegexRefused)) throw err;
      cost = { refused: err.message };
    }
    if (regexCosts.size >= REGEX_COSTS_KEPT) regexCosts.delete(regexCosts.keys().next().value!);
    regexCosts.set(source, cost);
  }
  return cost;
}

/** Compiles (or recalls) a regex rule's pattern and adds it to the flow's and the node's totals. */
function tallyRegex(source: string, where: string, id: string, tally: RegexTally): void {
  const cost = regexCost(source);
  if ('refused' in cost) throw new FlowValidationError(`${where}.regex refused: ${cost.refused}`, id);
  tally.count += 1;
  tally.source += source.length;
  tally.nodeProgram += cost.size;
  tally.program += cost.size;
  tally.span += cost.span;
  const over = (what: string) => new FlowValidationError(`${where}.regex refused: ${what}`, id);
  if (tally.count > FLOW_LIMITS.regexes) throw over(`the flow has more than ${FLOW_LIMITS.regexes} regex rules`);
  if (tally.nodeProgram > FLOW_LIMITS.regexNodeProgram) {
    throw over(
      `the regexes of this condition node add up to ${tally.nodeProgram} RE2 steps once repetitions are expanded (limit ${FLOW_LIMITS.regexNodeProgram} per condition node, the most one message is matched against)`,
    );
  }
  if (tally.source > FLOW_LIMITS.regexFlowSource) throw over(`the regexes of the flow add up to ${tally.source} characters (limit ${FLOW_LIMITS.regexFlowSource} per flow)`);
  if (tally.program > FLOW_LIMITS.regexFlowProgram) throw over(`the regexes of the flow add up to ${tally.program} RE2 steps once repetitions are expanded (limit ${FLOW_LIMITS.regexFlowProgram} per flow)`);
  if (tally.span > FLOW_LIMITS.regexFlowSpan) throw over(`the character ranges of the flow's regexes add up to ${tally.span} characters to fold case in (limit ${FLOW_LIMITS.regexFlowSpan} per flow)`);
}

/** Checks `value` against one of the flow schemas; the first issue becomes the error. */
function check(schema: TSchema, value: unknown, node: string | null, prefix = ''): void {
  const first = issues(schema, value)[0];
  if (!first) return;
  const field = prefix + (first.path === '' ? '' : prefix === '' ? first.path : first.path.startsWith('[') ? first.path : `.${first.path}`);
  const what = first.message === 'unknown field' ? `unknown field (fields starting with "_" are kept for tools)` : first.message;
  throw new FlowValidationError(field === '' ? what : `${field}${what.startsWith('is ') ? ' ' : ': '}${what}`, node);
}

function template(text: string, field: string, node: string): void {
  for (const m of text.matchAll(TEMPLATE)) {
    if (!(TEMPLATE_VARIABLES as readonly string[]).includes(m[1]!)) {
      throw new FlowValidationError(`${field}: unknown template variable ${m[0].slice(0, 40)} (use {{name}} or {{phone}})`, node);
    }
  }
}

/** A `next`/`else` reference: a node name, or absent (null counts as absent). */
function ref(v: string | null | undefined, field: string, node: string, nodes: Record<string, unknown>): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Object.hasOwn(nodes, v)) throw new FlowValidationError(`${field}: no node named "${v.slice(0, FLOW_LIMITS.nodeId)}"`, node);
  return v;
}

/** The "_" fields of an object: kept as they are (a visual builder's layout). */
function extras(obj: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(obj).filter(([k]) => k.startsWith('_')));
}

function rule(raw: Record<string, unknown>, i: number, id: string, nodes: Record<string, unknown>, tally: RegexTally): Rule {
  const where = `rules[${i}]`;
  const present = MATCHERS.filter((m) => raw[m] !== undefined);
  if (present.length !== 1) throw new FlowValidationError(`${where} needs exactly one of ${MATCHERS.join(', ')}`, id);
  const kind = present[0]!;
  check(RULE_SCHEMAS[kind], raw, id, where);
  const next = ref(raw.next as string | null | undefined, `${where}.next`, id, nodes);
  const tail = { ...extras(raw), ...(next !== undefined ? { next } : {}) };
  if (kind === 'any') return { any: true, ...tail };
  const value = raw[kind] as string;
  if (value.trim() === '') throw new FlowValidationError(`${where}.${kind} must not be empty`, id);
  if (kind === 'regex') tallyRegex(value, where, id, tally);
  return { [kind]: value, ...tail } as Rule;
}

function node(raw: unknown, id: string, nodes: Record<string, unknown>, tally: RegexTally): FlowNode {
  if (!isRecord(raw)) throw new FlowValidationError('must be an object', id);
  const type = raw.type;
  if (type !== 'message' && type !== 'condition' && type !== 'handover') throw new FlowValidationError('type must be "message", "condition" or "handover"', id);
  check(NODE_SCHEMAS[type], raw, id);
  const base: { description?: string } = extras(raw);
  if (typeof raw.description === 'string') base.description = raw.description;
  switch (type) {
    case 'message': {
      const text = raw.text as string;
      if (text.trim() === '') throw new FlowValidationError('text must not be empty', id);
      template(text, 'text', id);
      const next = ref(raw.next as string | null | undefined, 'next', id, nodes);
      return { ...base, type, text, ...(next !== undefined ? { next } : {}) };
    }
    case 'condition': {
      tally.nodeProgram = 0;
      const rules = (raw.rules as unknown[]).map((r, i) => {
        if (!isRecord(r)) throw new FlowValidationError(`rules[${i}] must be an object`, id);
        return rule(r, i, id, nodes, tally);
      });
      const otherwise = ref(raw.else as string | null | undefined, 'else', id, nodes);
      return { ...base, type, rules, ...(otherwise !== undefined ? { else: otherwise } : {}) };
    }
    case 'handover': {
      const text = typeof raw.text === 'string' && raw.text.trim() !== '' ? raw.text : undefined;
      if (text !== undefined) template(text, 'text', id);
      const next = ref(raw.next as string | null | undefined, 'next', id, nodes);
      return { ...base, type, ...(text !== undefined ? { text } : {}), ...(next !== undefined ? { next } : {}) };
    }
  }
}

/** Refuses loops made of message nodes only (they would send endlessly) and over-long chains. */
function checkMessageChains(nodes: Record<string, FlowNode>): void {
  const nextMessage = (id: string): string | undefined => {
    const n = nodes[id];
    if (n?.type !== 'message' || n.next === undefined) return undefined;
    return nodes[n.next]?.type === 'message' ? n.next : undefined;
  };
  // Longest run of messages starting at each node; the chain graph has out-degree 1.
  const depth = new Map<string, number>();
  for (const start of Object.keys(nodes)) {
    if (nodes[start]!.type !== 'message' || depth.has(start)) continue;
    const path: string[] = [];
    const onPath = new Set<string>();
    let cur: string | undefined = start;
    while (cur !== undefined && !depth.has(cur)) {
      if (onPath.has(cur)) {
        const loop = [...path.slice(path.indexOf(cur)), cur];
        throw new FlowValidationError(`message nodes ${loop.join(' -> ')} form a loop with no condition or handover in it (it would send messages endlessly)`, cur);
      }
      onPath.add(cur);
      path.push(cur);
      cur = nextMessage(cur);
    }
    let d = cur === undefined ? 0 : depth.get(cur)!;
    for (let i = path.length - 1; i >= 0; i--) {
      d += 1;
      depth.set(path[i]!, d);
    }
  }
  // Name the head of the longest chain, not a node in its middle.
  let longest: [string, number] | null = null;
  for (const entry of depth) if (!longest || entry[1] > longest[1]) longest = entry;
  if (longest && longest[1] > FLOW_LIMITS.messageChain) {
    throw new FlowValidationError(`starts a chain of ${longest[1]} message nodes in a row; at most ${FLOW_LIMITS.messageChain} are sent for one inbound message`, longest[0]);
  }
}

/**
 * Validates a flow document (parsed JSON) and returns it normalised (null references dropped,
 * "_" fields kept). The structure is the schema's (src/flows/schema.ts: the same definition the
 * OpenAPI document shows); then what a schema cannot say: references, template variables, regex
 * safety and what the regexes cost in all (per condition node and per flow, FLOW_LIMITS), message
 * loops. Throws FlowValidationError naming the node at fault.
 */
export function validateFlow(input: unknown): Flow {
  if (!isRecord(input)) throw new FlowValidationError('a flow must be a JSON object with name, start and nodes');
  check(FlowShape, input, null);
  const badName = Object.keys(input.nodes as Record<string, unknown>).find((id) => !NODE_ID.test(id));
  if (badName !== undefined) {
    throw new FlowValidationError(`nodes: invalid node name ${JSON.stringify(badName.slice(0, 80))} (letters, digits, "_", "-", "." and at most ${FLOW_LIMITS.nodeId} characters)`);
  }
  const raw = input.nodes as Record<string, unknown>;
  const start = input.start as string;
  if (!Object.hasOwn(raw, start)) throw new FlowValidationError(`start: no node named "${start.slice(0, FLOW_LIMITS.nodeId)}"`);
  if ((input.name as string).trim() === '') throw new FlowValidationError('name must not be empty');
  const nodes: Record<string, FlowNode> = Object.create(null) as Record<string, FlowNode>;
  const tally: RegexTally = { count: 0, source: 0, program: 0, span: 0, nodeProgram: 0 };
  for (const id of Object.keys(raw)) nodes[id] = node(raw[id], id, raw, tally);
  checkMessageChains(nodes);
  const flow: Flow = { ...extras(input), name: input.name as string, start, nodes };
  if (typeof input.description === 'string') flow.description = input.description;
  return flow;
}
