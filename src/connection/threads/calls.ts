import type { Connection } from '../types.js';

/**
 * The methods of a Connection a session thread runs when asked (every one that returns a promise).
 * `start` is a note (it returns nothing); `status`, `qr` and `reason` are mirrored, not asked.
 */
export const CONNECTION_CALLS = [
  'stop',
  'logout',
  'send',
  'sendPresence',
  'requestPairingCode',
  'react',
  'edit',
  'remove',
  'markRead',
  'presence',
  'checkNumbers',
  'groups',
  'group',
  'createGroup',
  'updateGroup',
  'groupParticipants',
  'groupInvite',
  'joinGroup',
  'leaveGroup',
  'groupPicture',
  'rejectCall',
  'subscribePresence',
  'contactInfo',
  'setBlocked',
  'blocklist',
  'profile',
  'updateProfile',
  'setProfilePicture',
  'modifyChat',
  'labels',
  'labelChat',
] as const satisfies ReadonlyArray<keyof Connection>;

export type ConnectionCall = (typeof CONNECTION_CALLS)[number];

const CALLS: ReadonlySet<string> = new Set(CONNECTION_CALLS);

export function isConnectionCall(name: unknown): name is ConnectionCall {
  return typeof name === 'string' && CALLS.has(name);
}

/** The hooks a session thread calls in the daemon and waits for. */
export const HOOK_CALLS = ['onMessage', 'onUpdate', 'onEvent', 'pollOf', 'onLabel'] as const;
export type HookCall = (typeof HOOK_CALLS)[number];
const HOOKS: ReadonlySet<string> = new Set(HOOK_CALLS);
export function isHookCall(name: unknown): name is HookCall {
  return typeof name === 'string' && HOOKS.has(name);
}
