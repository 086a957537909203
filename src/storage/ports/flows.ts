import type { Conversation, Handover, StoredFlow } from '../../schemas/flow.js';

/**
 * The chatbot's state per instance: its flow, its open handovers and where each chat stands. A
 * save names what changed beside the whole current set, so an engine writes either the whole set
 * (one file) or only the changed rows.
 */
export interface FlowRepository {
  /** The stored flow or null; throws STORE_CORRUPT for one that cannot be read. */
  readFlow(instanceId: string): Promise<StoredFlow | null>;
  writeFlow(instanceId: string, stored: StoredFlow): Promise<void>;
  /** Removes the flow (a corrupt one too). */
  clearFlow(instanceId: string): Promise<void>;
  readHandovers(instanceId: string): Promise<Map<string, Handover>>;
  /** Stores the open handovers: `all` as they are now, `changed` the chat ids put or removed. */
  saveHandovers(instanceId: string, all: ReadonlyMap<string, Handover>, changed: Iterable<string>): Promise<void>;
  /** Instances that have handovers stored (their expiries are watched from start-up). */
  instancesWithHandovers(): Promise<string[]>;
  readConversations(instanceId: string): Promise<Map<string, Conversation>>;
  /**
   * Stores where chats stand (`all` now, `changed` the chat ids set or forgotten). Positions may be
   * lost in a crash: losing the last few only restarts those chats.
   */
  saveConversations(instanceId: string, all: ReadonlyMap<string, Conversation>, changed: Iterable<string>): Promise<void>;
  removeInstance(instanceId: string): Promise<void>;
}
