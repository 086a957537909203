import { FLOW_LIMITS } from '../../flows/types.js';
import { isoTime, obj, phone, ref, str, success } from './helpers.js';
import type { SchemaObject } from './types.js';

const nodeName = (description: string): SchemaObject => str(description, { pattern: `^[A-Za-z0-9_.-]{1,${FLOW_LIMITS.nodeId}}$` });
const note: SchemaObject = str('A note for people; ignored by the engine.', { maxLength: FLOW_LIMITS.description });
const template = (description: string): SchemaObject =>
  str(`${description} {{name}} (sender push name, empty if unknown) and {{phone}} are replaced.`, { maxLength: FLOW_LIMITS.text });
const closed = (schema: SchemaObject): SchemaObject => ({ ...schema, additionalProperties: false });

const next = nodeName('Node this rule leads to; absent: the flow ends.');
const rule: SchemaObject = {
  description: 'One matcher and where it leads. Text is trimmed and compared case-insensitively; the first matching rule wins.',
  oneOf: [
    closed(obj({ equals: str('Whole text equals this.', { maxLength: FLOW_LIMITS.matcher }), next }, ['equals'])),
    closed(obj({ contains: str('Text contains this.', { maxLength: FLOW_LIMITS.matcher }), next }, ['contains'])),
    closed(obj({ regex: str('A regular expression in JavaScript syntax, matched case-insensitively in linear time (RE2); backreferences and lookaround are refused.', { maxLength: FLOW_LIMITS.regexSource }), next }, ['regex'])),
    closed(obj({ any: { const: true }, next }, ['any'])),
  ],
};

const flowNode: SchemaObject = {
  oneOf: [
    closed(obj({ type: { const: 'message' }, text: template('Text to send.'), next: nodeName('Node to go to next; absent ends the flow.'), description: note }, ['type', 'text'], 'Sends its text and moves on.')),
    closed(
      obj(
        {
          type: { const: 'condition' },
          rules: { type: 'array', items: ref('FlowRule'), maxItems: FLOW_LIMITS.rules },
          else: nodeName('Node when no rule matches; absent: the flow ends.'),
          description: note,
        },
        ['type', 'rules'],
        'Waits for the next inbound message and routes on it.',
      ),
    ),
    closed(
      obj(
        {
          type: { const: 'handover' },
          text: template('Sent before the bot falls silent.'),
          next: nodeName('Where the conversation resumes after release; absent: from start.'),
          description: note,
        },
        ['type'],
        'Hands the conversation to a human: the bot stays silent in that chat until released or flows.handoverTimeoutMinutes pass.',
      ),
    ),
  ],
};

const storedFlow = { success, instanceId: ref('InstanceId'), flow: ref('Flow'), revision: str('Changes with every PUT.'), updatedAt: isoTime('When the flow was last set.') };

/** Schemas of the chatbot flow routes (served by the flows part, src/flows). */
export function flowSchemas(): Record<string, SchemaObject> {
  return {
    FlowRule: rule,
    FlowNode: flowNode,
    Flow: closed({
      type: 'object',
      description: `A chatbot flow of message, condition and handover nodes (at most ${FLOW_LIMITS.nodes}). Validation refuses unknown node references, a missing start, loops of message nodes and unsafe regexes, naming the node.`,
      properties: {
        name: str('Flow name.', { maxLength: FLOW_LIMITS.name }),
        description: note,
        start: nodeName('Node the flow starts at.'),
        nodes: { type: 'object', additionalProperties: ref('FlowNode'), minProperties: 1 },
      },
      required: ['name', 'start', 'nodes'],
    }),
    FlowResponse: obj(storedFlow, ['success', 'instanceId', 'flow', 'revision', 'updatedAt']),
    FlowClearedResponse: obj({ success, instanceId: ref('InstanceId'), deleted: { type: 'boolean', description: 'False when no flow was set.' } }, ['success', 'instanceId', 'deleted']),
    HandoverReleaseRequest: obj({ phone: ref('Phone') }, ['phone']),
    HandoverReleaseResponse: obj({ success, instanceId: ref('InstanceId'), phone: ref('Phone'), released: { const: true } }, ['success', 'instanceId', 'phone', 'released']),
    Handover: obj(
      {
        phone: phone('The contact a human has taken over.'),
        chatId: { type: 'string' },
        fromName: { type: ['string', 'null'], description: 'Contact push name, when known.' },
        flow: str('Flow name.'),
        node: str('Handover node.'),
        openedAt: isoTime('When the handover started.'),
        expiresAt: isoTime('When the bot takes over again unless released before.'),
      },
      ['phone', 'chatId', 'fromName', 'flow', 'node', 'openedAt', 'expiresAt'],
    ),
    HandoversResponse: obj({ success, instanceId: ref('InstanceId'), handovers: { type: 'array', items: ref('Handover') } }, ['success', 'instanceId', 'handovers']),
  };
}
