import { RegexRefused, SafeRegex } from './safe-regex.js';
import { FLOW_LIMITS, type ConditionNode, type Flow, type FlowNode, type HandoverNode, type MessageNode, type Rule } from './types.js';
import { isRecord } from '../domain/guards.js';

/** A flow document that breaks the contract; the message starts with the node (or field) at fault. */
export class FlowValidationError extends Error {
  readonly node: string | null;
  constructor(message: string, node: string | null = null) {
    super(node === null ? message : `node "${node}": ${message}`);
    this.name = 'FlowValidationError';
    this.node = node;
  }
}

const NODE_ID = new RegExp(`^[A-Za-z0-9_.-]{1,${FLOW_LIMITS.nodeId}}$`);
export const TEMPLATE_VARIABLES = ['name', 'phone'] as const;
const TEMPLATE = /\{\{\s*([^{}]*?)\s*\}\}/g;
const MATCHERS = ['equals', 'contains', 'regex', 'any'] as const;


/** Keys starting with "_" are left to tools (a visual builder's layout) and ignored. */
function checkKeys(obj: Record<string, unknown>, allowed: readonly string[], where: string, node: string | null): void {
  for (const key of Object.keys(obj)) {
    if (key.startsWith('_') || allowed.includes(key)) continue;
    throw new FlowValidationError(`${where}unknown field "${key.slice(0, 40)}" (allowed: ${allowed.join(', ')})`, node);
  }
}

function text(v: unknown, field: string, node: string | null, options: { required: boolean; max: number; template?: boolean }): string | undefined {
  if (v === undefined || v === null) {
    if (options.required) throw new FlowValidationError(`${field} is required`, node);
    return undefined;
  }
  if (typeof v !== 'string') throw new FlowValidationError(`${field} must be a string`, node);
  if (options.required && v.trim() === '') throw new FlowValidationError(`${field} must not be empty`, node);
  if (v.length > options.max) throw new FlowValidationError(`${field} must be at most ${options.max} characters`, node);
  if (options.template) {
    for (const m of v.matchAll(TEMPLATE)) {
      if (!(TEMPLATE_VARIABLES as readonly string[]).includes(m[1]!)) {
        throw new FlowValidationError(`${field}: unknown template variable ${m[0].slice(0, 40)} (use {{name}} or {{phone}})`, node);
      }
    }
  }
  return v;
}

/** A `next`/`else` reference: a string naming a node, or absent (null counts as absent). */
function ref(v: unknown, field: string, node: string, nodes: Record<string, unknown>): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new FlowValidationError(`${field} must be a node name`, node);
  if (!Object.hasOwn(nodes, v)) throw new FlowValidationError(`${field}: no node named "${v.slice(0, FLOW_LIMITS.nodeId)}"`, node);
  return v;
}

function extras(obj: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(obj).filter(([k]) => k.startsWith('_')));
}

function rule(raw: unknown, i: number, id: string, nodes: Record<string, unknown>): Rule {
  const where = `rules[${i}]`;
  if (!isRecord(raw)) throw new FlowValidationError(`${where} must be an object`, id);
  checkKeys(raw, [...MATCHERS, 'next'], `${where}: `, id);
  const present = MATCHERS.filter((m) => raw[m] !== undefined);
  if (present.length !== 1) throw new FlowValidationError(`${where} needs exactly one of ${MATCHERS.join(', ')}`, id);
  const next = ref(raw.next, `${where}.next`, id, nodes);
  const tail = { ...extras(raw), ...(next !== undefined ? { next } : {}) };
  const kind = present[0]!;
  if (kind === 'any') {
    if (raw.any !== true) throw new FlowValidationError(`${where}.any must be true`, id);
    return { any: true, ...tail };
  }
  const max = kind === 'regex' ? FLOW_LIMITS.regexSource : FLOW_LIMITS.matcher;
  const value = text(raw[kind], `${where}.${kind}`, id, { required: true, max })!;
  if (kind === 'regex') {
    try {
      SafeRegex.compile(value, { repeat: FLOW_LIMITS.regexRepeat, program: FLOW_LIMITS.regexProgram });
    } catch (err) {
      if (err instanceof RegexRefused) throw new FlowValidationError(`${where}.regex refused: ${err.message}`, id);
      throw err;
    }
  }
  return { [kind]: value, ...tail } as Rule;
}

function node(raw: unknown, id: string, nodes: Record<string, unknown>): FlowNode {
  if (!isRecord(raw)) throw new FlowValidationError('must be an object', id);
  const base: { description?: string } = extras(raw);
  const description = text(raw.description, 'description', id, { required: false, max: FLOW_LIMITS.description });
  if (description !== undefined) base.description = description;
  switch (raw.type) {
    case 'message': {
      checkKeys(raw, ['type', 'text', 'next', 'description'], '', id);
      const n: MessageNode = { ...base, type: 'message', text: text(raw.text, 'text', id, { required: true, max: FLOW_LIMITS.text, template: true })! };
      const next = ref(raw.next, 'next', id, nodes);
      if (next !== undefined) n.next = next;
      return n;
    }
    case 'condition': {
      checkKeys(raw, ['type', 'rules', 'else', 'description'], '', id);
      if (!Array.isArray(raw.rules)) throw new FlowValidationError('rules must be an array', id);
      if (raw.rules.length > FLOW_LIMITS.rules) throw new FlowValidationError(`at most ${FLOW_LIMITS.rules} rules`, id);
      const n: ConditionNode = { ...base, type: 'condition', rules: raw.rules.map((r, i) => rule(r, i, id, nodes)) };
      const otherwise = ref(raw.else, 'else', id, nodes);
      if (otherwise !== undefined) n.else = otherwise;
      return n;
    }
    case 'handover': {
      checkKeys(raw, ['type', 'text', 'next', 'description'], '', id);
      const n: HandoverNode = { ...base, type: 'handover' };
      const t = text(raw.text, 'text', id, { required: false, max: FLOW_LIMITS.text, template: true });
      if (t !== undefined && t.trim() !== '') n.text = t;
      const next = ref(raw.next, 'next', id, nodes);
      if (next !== undefined) n.next = next;
      return n;
    }
    default:
      throw new FlowValidationError('type must be "message", "condition" or "handover"', id);
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
 * Validates a flow document (parsed JSON) against the contract in docs/flows.md and returns it
 * normalised (null references dropped, unknown "_" fields kept). Throws FlowValidationError naming
 * the node at fault.
 */
export function validateFlow(input: unknown): Flow {
  if (!isRecord(input)) throw new FlowValidationError('a flow must be a JSON object with name, start and nodes');
  checkKeys(input, ['name', 'description', 'start', 'nodes'], '', null);
  const name = text(input.name, 'name', null, { required: true, max: FLOW_LIMITS.name })!;
  const description = text(input.description, 'description', null, { required: false, max: FLOW_LIMITS.description });
  if (!isRecord(input.nodes)) throw new FlowValidationError('nodes must be an object of node name -> node');
  const raw = input.nodes;
  const ids = Object.keys(raw);
  if (ids.length === 0) throw new FlowValidationError('nodes must not be empty');
  if (ids.length > FLOW_LIMITS.nodes) throw new FlowValidationError(`nodes: at most ${FLOW_LIMITS.nodes} nodes`);
  for (const id of ids) {
    if (!NODE_ID.test(id)) throw new FlowValidationError(`nodes: invalid node name ${JSON.stringify(id.slice(0, 80))} (letters, digits, "_", "-", "." and at most ${FLOW_LIMITS.nodeId} characters)`);
  }
  if (input.start === undefined || input.start === null || input.start === '') throw new FlowValidationError('start is required: the name of the first node');
  if (typeof input.start !== 'string') throw new FlowValidationError('start must be a node name');
  if (!Object.hasOwn(raw, input.start)) throw new FlowValidationError(`start: no node named "${input.start.slice(0, FLOW_LIMITS.nodeId)}"`);
  const nodes: Record<string, FlowNode> = Object.create(null) as Record<string, FlowNode>;
  for (const id of ids) nodes[id] = node(raw[id], id, raw);
  checkMessageChains(nodes);
  const flow: Flow = { ...extras(input), name, start: input.start, nodes };
  if (description !== undefined) flow.description = description;
  return flow;
}
