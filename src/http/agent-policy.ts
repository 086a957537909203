/**
 * What an agent operator's panel session may call, on its own instances only: the inbox (chats,
 * messages and their media, search, a reply in text or media, read marks, claiming and releasing a
 * chat, the open handovers, live events, the list of groups that names the group chats) and the
 * read-only status. Every other route, admin routes included, answers 401 to an agent. One list,
 * by operationId, so the policy is read in one place.
 */
export const AGENT_OPERATIONS: ReadonlySet<string> = new Set([
  'getStatus',
  'listChats',
  'listGroups',
  'listChatMessages',
  'searchMessages',
  'getMessage',
  'getMessageMedia',
  'sendText',
  'sendMedia',
  'markRead',
  'listHandovers',
  'releaseHandover',
  'claimChat',
  'liveEvents',
]);
