import Type, { type Static } from 'typebox';
import { FLOW_LIMITS, type Flow } from './types.js';
import { validateFlow } from './validate.js';

/**
 * The flow document as a schema, for the OpenAPI document and the panel. Keys starting with "_"
 * are left to tools (a visual builder's layout) on the flow, its nodes and rules. The flow
 * validator (validate.ts) applies the same limits plus what a schema cannot say (references,
 * template variables, regex safety, message loops) and names the node at fault.
 */
const toolKeys = { patternProperties: { '^_': {} }, additionalProperties: false } as const;
const NodeName = Type.String({ pattern: `^[A-Za-z0-9_.-]{1,${FLOW_LIMITS.nodeId}}$`, description: 'A node name.' });
/** A reference to a node; null counts as absent. */
const NodeRef = Type.Union([NodeName, Type.Null()]);
const Description = Type.Optional(Type.Union([Type.String({ maxLength: FLOW_LIMITS.description }), Type.Null()]));
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

export const FlowRule = Type.Union([RULE_SCHEMAS.equals, RULE_SCHEMAS.contains, RULE_SCHEMAS.regex, RULE_SCHEMAS.any]);

/** One schema per node type; the validator picks it by `type`, so errors speak of that type. */
export const NODE_SCHEMAS = {
  message: Type.Object({ type: Type.Literal('message'), text: Text, next: Type.Optional(NodeRef), description: Description }, toolKeys),
  condition: Type.Object(
    { type: Type.Literal('condition'), rules: Type.Array(Type.Object({}, { additionalProperties: true }), { maxItems: FLOW_LIMITS.rules }), else: Type.Optional(NodeRef), description: Description },
    toolKeys,
  ),
  handover: Type.Object({ type: Type.Literal('handover'), text: Type.Optional(Type.Union([Type.String({ maxLength: FLOW_LIMITS.text }), Type.Null()])), next: Type.Optional(NodeRef), description: Description }, toolKeys),
} as const;

export const FlowNodeSchema = Type.Union([
  NODE_SCHEMAS.message,
  Type.Object({ ...NODE_SCHEMAS.condition.properties, rules: Type.Array(FlowRule, { maxItems: FLOW_LIMITS.rules }) }, toolKeys),
  NODE_SCHEMAS.handover,
]);

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

export const FlowDocument = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: FLOW_LIMITS.name }),
    description: Description,
    start: NodeName,
    nodes: Type.Record(NodeName, FlowNodeSchema, { minProperties: 1, maxProperties: FLOW_LIMITS.nodes }),
  },
  { ...toolKeys, description: 'A chatbot flow: message, condition and handover nodes (docs/flows.md).' },
);

/** A flow from a request body: the validator's check (FlowValidationError: INVALID_FIELD with `error.node`). */
export function parseFlowBody(raw: unknown): Flow {
  return validateFlow(raw);
}

/** The validated form is one the document allows (the compiler checks schema and types agree). */
export const validatedIsDocument: (flow: Flow) => Static<typeof FlowDocument> = (flow) => flow;
