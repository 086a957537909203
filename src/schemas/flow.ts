import Type, { type Static } from 'typebox';

/**
 * The chatbot's stored shapes: the flow document (its types; the validator in src/flows/ checks
 * it) and the state kept per conversation and per open handover. Shared by the flows feature and
 * the storage ports.
 */

export type Rule =
  | { equals: string; next?: string }
  | { contains: string; next?: string }
  | { regex: string; next?: string }
  | { any: true; next?: string };

/** Any node may carry a note for people. */
interface NodeBase {
  description?: string;
}

export interface MessageNode extends NodeBase {
  type: 'message';
  text: string;
  /** Absent: the flow ends after this message. */
  next?: string;
}

export interface ConditionNode extends NodeBase {
  type: 'condition';
  rules: Rule[];
  /** Where to go when no rule matches; absent: the flow ends. */
  else?: string;
}

export interface HandoverNode extends NodeBase {
  type: 'handover';
  /** Sent before the bot falls silent. */
  text?: string;
  /** Where the conversation resumes after the handover is released; absent: from `start`. */
  next?: string;
}

export type FlowNode = MessageNode | ConditionNode | HandoverNode;

export interface Flow {
  name: string;
  description?: string;
  start: string;
  nodes: Record<string, FlowNode>;
}

/** Where one chat stands in the instance's flow (conversations.json). */
export const ConversationRecord = Type.Object({
  phone: Type.String(),
  /** Node the next inbound message starts at (a waiting condition, or a handover's resume point); null = `start`. */
  node: Type.Union([Type.String(), Type.Null()]),
  /** The flow revision `node` belongs to; a different flow restarts the conversation. */
  revision: Type.String(),
  updatedAt: Type.String(),
});
export type Conversation = Static<typeof ConversationRecord>;

/** An open handover: the bot is silent in this chat until release or `expiresAt` (handovers.json). */
export const HandoverRecord = Type.Object({
  chatId: Type.String(),
  phone: Type.String(),
  fromName: Type.Optional(Type.String()),
  flow: Type.String(),
  node: Type.String(),
  openedAt: Type.String(),
  expiresAt: Type.String(),
  /** Who claimed the chat in the inbox (`operator:NAME`, `secret`, `instance:ID`), if anyone. */
  claimedBy: Type.Optional(Type.String()),
});
export type Handover = Static<typeof HandoverRecord>;

/**
 * A flow as stored (flow.json): the document plus what the daemon needs to notice a change. The
 * document itself was validated when it was put (validateFlow); here it is only an object.
 */
export const StoredFlowRecord = Type.Object({
  version: Type.Literal(1),
  revision: Type.String(),
  updatedAt: Type.String(),
  flow: Type.Unsafe<Flow>(Type.Object({})),
});
export type StoredFlow = Static<typeof StoredFlowRecord>;
