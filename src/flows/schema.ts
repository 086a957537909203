import Type from 'typebox';
import { GatewayError } from '../domain/errors.js';
import { issueText, issues } from '../schemas/check.js';
import { FLOW_LIMITS, type Flow } from './types.js';
import { FlowValidationError, validateFlow } from './validate.js';

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
const Description = Type.Optional(Type.String({ maxLength: FLOW_LIMITS.description }));
const Text = Type.String({ minLength: 1, maxLength: FLOW_LIMITS.text, description: 'May use {{name}} and {{phone}}.' });

const Matcher = (key: 'equals' | 'contains' | 'regex', maxLength: number) =>
  Type.Object({ [key]: Type.String({ minLength: 1, maxLength }), next: Type.Optional(NodeRef) }, toolKeys);

export const FlowRule = Type.Union([
  Matcher('equals', FLOW_LIMITS.matcher),
  Matcher('contains', FLOW_LIMITS.matcher),
  Matcher('regex', FLOW_LIMITS.regexSource),
  Type.Object({ any: Type.Literal(true), next: Type.Optional(NodeRef) }, toolKeys),
]);

export const FlowNodeSchema = Type.Union([
  Type.Object({ type: Type.Literal('message'), text: Text, next: Type.Optional(NodeRef), description: Description }, toolKeys),
  Type.Object({ type: Type.Literal('condition'), rules: Type.Array(FlowRule, { maxItems: FLOW_LIMITS.rules }), else: Type.Optional(NodeRef), description: Description }, toolKeys),
  Type.Object({ type: Type.Literal('handover'), text: Type.Optional(Type.String({ maxLength: FLOW_LIMITS.text })), next: Type.Optional(NodeRef), description: Description }, toolKeys),
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

/**
 * A flow from a request body: the schema's structural check (an issue under `nodes.<name>` names
 * that node), then the flow validator's. Both refuse with INVALID_FIELD and `error.node`.
 */
export function parseFlowBody(raw: unknown): Flow {
  const found = issues(FlowDocument, raw);
  if (found.length > 0) {
    const first = found[0]!;
    const node = /^nodes\.([^.[]+)/.exec(first.path)?.[1];
    throw new GatewayError(first.code === 'MISSING_FIELD' ? 'INVALID_FIELD' : first.code, issueText(first), node === undefined ? undefined : { detail: { node } });
  }
  try {
    return validateFlow(raw);
  } catch (err) {
    if (err instanceof FlowValidationError) throw new GatewayError('INVALID_FIELD', err.message, err.node === null ? undefined : { detail: { node: err.node } });
    throw err;
  }
}
