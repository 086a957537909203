import type { Static } from 'typebox';
import type { ConnectionActions } from '../connection/types.js';
import type { CheckBody, GroupsBody } from '../schemas/send.js';

/**
 * Asking WhatsApp, free and unpaced: which numbers exist, which groups the account is in (503
 * CONNECTION_NOT_READY unless connected). The REST routes and the MCP tools both ask through here.
 */
export async function checkNumbers(sender: ConnectionActions, instanceId: string, phones: string[]): Promise<Static<typeof CheckBody>> {
  const results = await sender.act(instanceId, (c) => c.checkNumbers(phones), { paced: false });
  return { success: true, instanceId, results };
}

export async function listGroups(sender: ConnectionActions, instanceId: string): Promise<Static<typeof GroupsBody>> {
  const groups = await sender.act(instanceId, (c) => c.groups(), { paced: false });
  return { success: true, instanceId, groups };
}
