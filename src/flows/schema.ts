import Type, { type Static } from 'typebox';
import { FLOW_LIMITS, type Flow } from './types.js';
import { Description, NODE_SCHEMAS, NodeName, RULE_SCHEMAS, toolKeys } from './node-schemas.js';
import { validateFlow } from './validate.js';

/**
 * The flow document as a schema, for the OpenAPI document and the panel, built from the pieces the
 * validator checks node by node (node-schemas.ts). The flow validator (validate.ts) applies the
 * same limits plus what a schema cannot say (references, template variables, regex safety and
 * size, message loops) and names the node at fault.
 */
export const FlowRule = Type.Union([RULE_SCHEMAS.equals, RULE_SCHEMAS.contains, RULE_SCHEMAS.regex, RULE_SCHEMAS.any]);

export const FlowNodeSchema = Type.Union([
  NODE_SCHEMAS.message,
  Type.Object({ ...NODE_SCHEMAS.condition.properties, rules: Type.Array(FlowRule, { maxItems: FLOW_LIMITS.rules }) }, toolKeys),
  NODE_SCHEMAS.handover,
]);

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
