import type { FlowRepository } from '../ports/flows.js';
import type { Db } from '../postgres/db.js';
import { PgFlows } from '../postgres/flows.js';
import { LeaseEpochs } from '../postgres/lease-epochs.js';

export interface FlowsCopied {
  flow: 0 | 1;
  handovers: number;
  conversations: number;
}

/**
 * The chatbot's state of an instance, through the PostgreSQL engine's own writer: the flow, each
 * open handover (its expiry as stored, so the bot stays muted as long as it would have) and each
 * chat's position. Rows the files do not hold (an earlier run, then changed) are removed.
 */
export async function copyFlows(db: Db, from: FlowRepository, instanceId: string): Promise<FlowsCopied> {
  // The migration's connection has no node id: its writes are not fenced, and carry no epoch.
  const to = new PgFlows(db, new LeaseEpochs());
  const flow = await from.readFlow(instanceId);
  if (flow) await to.writeFlow(instanceId, flow);
  else await to.clearFlow(instanceId);
  const handovers = await from.readHandovers(instanceId);
  await to.saveHandovers(instanceId, handovers, new Set([...handovers.keys(), ...(await to.readHandovers(instanceId)).keys()]));
  const conversations = await from.readConversations(instanceId);
  await to.saveConversations(instanceId, conversations, new Set([...conversations.keys(), ...(await to.readConversations(instanceId)).keys()]));
  return { flow: flow ? 1 : 0, handovers: handovers.size, conversations: conversations.size };
}
