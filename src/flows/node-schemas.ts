import Type from 'typebox';
import { FLOW_LIMITS } from './types.js';

/**
 * The pieces of the flow document schema that the validator checks node by node, apart from the
 * whole document (schema.ts) so that the validator can use them and schema.ts can use the
 * validator without the two importing each other. Keys starting with "_" are left to tools (a
 * visual builder's layout) on the flow, its nodes and rules.
 */
export const toolKeys = { patternProperties: { '^_': {} }, additionalProperties: false } as const;
export const NodeName = Type.String({ pattern: `^[A-Za-z0-9_.-]{1,${FLOW_LIMITS.nodeId}}$`, description: 'A node name.' });
/** A reference to a node; null counts as absent. */
const NodeRef = Type.Union([NodeName, Type.Null()]);
export const Description = Type.Optional(Type.Union([Type.String({ maxLength: FLOW_LIMITS.description }), Type.Null()]));
const Text = Type.String({ minLength: 1, maxLength: FLOW_LIMITS.text, description: 'May use {{name}} and {{phone}}.' });

const Matcher = (key: 'equals' | 'contains' | 'regex', maxLength: number) =>
  Type.Object({ [key]: Type.String({ minLength: 1, maxLength }), next: Type.Optional(NodeRef) }, toolKeys);

/** Each rule has exactly one matcher; the validator picks the schema by the matcher present. */
export const RULE_SCHEMAS = {
  equals: Matcher('equals', FLOW_LIMITS.matcher),
  contains: Matcher('contains', FLOW_LIMITS.matcher),
  regex: Matcher('regex', FLOW_LIMITS.regexSource),
  any: Type.Object({ any: Type.Literal(true), next: Type.Optional(NodeRef) }, toolKeys),
} as const;

/** One schema per node type; the validator picks it by `type`, so errors speak of that type. */
export const NODE_SCHEMAS = {
  message: Type.Object({ type: Type.Literal('message'), text: Text, next: Type.Optional(NodeRef), description: Description }, toolKeys),
  condition: Type.Object(
    { type: Type.Literal('condition'), rules: Type.Array(Type.Object({}, { additionalProperties: true }), { maxItems: FLOW_LIMITS.rules }), else: Type.Optional(NodeRef), description: Description },
    toolKeys,
  ),
  handover: Type.Object({ type: Type.Literal('handover'), text: Type.Optional(Type.Union([Type.String({ maxLength: FLOW_LIMITS.text }), Type.Null()])), next: Type.Optional(NodeRef), description: Description }, toolKeys),
} as const;

/** The flow without its nodes' insides (checked node by node). */
export const FlowShape = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: FLOW_LIMITS.name }),
    description: Type.Optional(Type.Union([Type.String({ maxLength: FLOW_LIMITS.description }), Type.Null()])),
    start: NodeName,
    nodes: Type.Record(NodeName, Type.Object({}, { additionalProperties: true }), { minProperties: 1, maxProperties: FLOW_LIMITS.nodes }),
  },
  toolKeys,
);
