import type { ConnectionStatus } from '../../domain/types.js';
import type { InstanceRecord } from '../../schemas/instance.js';
import type { GroupAction, PresenceState } from '../../schemas/account-events.js';
import type { CreatedGroup, GroupSettings, ParticipantResult } from '../account-types.js';
import type { BlockedContact, ChatChange, ContactInfo, LabelInfo, ProfileInfo } from '../contacts-types.js';
import type { Connection, ConnectionHooks, GroupInfo, GroupSummary, LogoutOutcome, MessageRef, NumberCheck, Outgoing, StatusChange } from '../types.js';
import type { ConnectionCall } from './calls.js';
import type { RemoteState } from './wire-types.js';

/** Where a remote connection lives now: its thread and its number there (session-threads.ts). */
export interface Placement {
  call<T>(method: ConnectionCall, args: unknown[]): Promise<T>;
  start(): void;
}

/**
 * A connection whose Baileys socket runs in a session thread (session-threads.ts). Every method is
 * a call to that thread; `status`, `qr` and `reason` are the thread's, as it last said them (with
 * every status change, QR and answer), so reading them never waits.
 */
export class RemoteConnection implements Connection {
  private state: RemoteState = { status: 'initializing', qr: null, reason: null };
  /** start() was called and no stop() or logout() since: a replaced thread starts it again. */
  private wantedFlag = false;

  constructor(
    readonly instanceId: string,
    readonly record: InstanceRecord,
    readonly hooks: ConnectionHooks,
    private placement: Placement,
  ) {}

  get status(): ConnectionStatus {
    return this.state.status;
  }

  get qr(): string | null {
    return this.state.status === 'qr_code_generated' ? this.state.qr : null;
  }

  get reason(): string | null {
    return this.state.reason;
  }

  /** What the thread says the connection's state is now. */
  mirror(state: RemoteState | null): void {
    if (state) this.state = state;
  }

  /**
   * The thread it ran on stopped: the connection is disconnected (reported like any other
   * disconnection) until `placement` (a new thread) starts it again, when it was wanted.
   */
  lost(placement: Placement, why: string, restart: boolean): void {
    this.placement = placement;
    const from = this.state.status;
    this.state = { status: 'disconnected', qr: null, reason: why };
    const change: StatusChange = { from, to: 'disconnected', reason: why, next: this.wantedFlag ? (restart ? 'retrying' : 'gave-up') : 'stopped' };
    try {
      this.hooks.onStatus(change);
    } catch {
      // Hooks guard themselves (ConnectionHooks); a throw here must not stop the others' recovery.
    }
    if (!restart) this.wantedFlag = false;
    if (restart && this.wantedFlag) this.placement.start();
  }

  start(): void {
    this.wantedFlag = true;
    this.placement.start();
  }

  stop(): Promise<void> {
    this.wantedFlag = false;
    return this.placement.call('stop', []);
  }

  logout(options?: { timeoutMs?: number }): Promise<LogoutOutcome> {
    this.wantedFlag = false;
    return this.placement.call('logout', [options ?? {}]);
  }

  send(message: Outgoing): Promise<{ messageId: string }> {
    return this.placement.call('send', [message]);
  }

  sendPresence(to: string, state: 'composing' | 'paused'): Promise<void> {
    return this.placement.call('sendPresence', [to, state]);
  }

  requestPairingCode(phone: string): Promise<string> {
    return this.placement.call('requestPairingCode', [phone]);
  }

  react(target: MessageRef, emoji: string): Promise<void> {
    return this.placement.call('react', [target, emoji]);
  }

  edit(target: MessageRef, text: string): Promise<void> {
    return this.placement.call('edit', [target, text]);
  }

  remove(target: MessageRef): Promise<void> {
    return this.placement.call('remove', [target]);
  }

  markRead(targets: MessageRef[]): Promise<void> {
    return this.placement.call('markRead', [targets]);
  }

  presence(chatId: string, state: PresenceState): Promise<void> {
    return this.placement.call('presence', [chatId, state]);
  }

  checkNumbers(phones: string[]): Promise<NumberCheck[]> {
    return this.placement.call('checkNumbers', [phones]);
  }

  groups(): Promise<GroupSummary[]> {
    return this.placement.call('groups', []);
  }

  group(chatId: string): Promise<GroupInfo | null> {
    return this.placement.call('group', [chatId]);
  }

  createGroup(subject: string, participants: string[]): Promise<CreatedGroup> {
    return this.placement.call('createGroup', [subject, participants]);
  }

  updateGroup(chatId: string, settings: GroupSettings): Promise<void> {
    return this.placement.call('updateGroup', [chatId, settings]);
  }

  groupParticipants(chatId: string, action: GroupAction, participants: string[]): Promise<ParticipantResult[]> {
    return this.placement.call('groupParticipants', [chatId, action, participants]);
  }

  groupInvite(chatId: string, revoke: boolean): Promise<string> {
    return this.placement.call('groupInvite', [chatId, revoke]);
  }

  joinGroup(code: string): Promise<string> {
    return this.placement.call('joinGroup', [code]);
  }

  leaveGroup(chatId: string): Promise<void> {
    return this.placement.call('leaveGroup', [chatId]);
  }

  groupPicture(chatId: string, image: Uint8Array | null): Promise<void> {
    return this.placement.call('groupPicture', [chatId, image]);
  }

  rejectCall(callId: string): Promise<boolean> {
    return this.placement.call('rejectCall', [callId]);
  }

  subscribePresence(chatId: string): Promise<void> {
    return this.placement.call('subscribePresence', [chatId]);
  }

  contactInfo(chatId: string): Promise<ContactInfo> {
    return this.placement.call('contactInfo', [chatId]);
  }

  setBlocked(chatId: string, blocked: boolean): Promise<void> {
    return this.placement.call('setBlocked', [chatId, blocked]);
  }

  blocklist(): Promise<BlockedContact[]> {
    return this.placement.call('blocklist', []);
  }

  profile(): Promise<ProfileInfo> {
    return this.placement.call('profile', []);
  }

  updateProfile(change: { name?: string; about?: string }): Promise<void> {
    return this.placement.call('updateProfile', [change]);
  }

  setProfilePicture(picture: { path: string } | null): Promise<void> {
    return this.placement.call('setProfilePicture', [picture]);
  }

  modifyChat(chatId: string, change: ChatChange): Promise<void> {
    return this.placement.call('modifyChat', [chatId, change]);
  }

  labels(): Promise<LabelInfo[]> {
    return this.placement.call('labels', []);
  }

  labelChat(chatId: string, change: { add: string[]; remove: string[] }): Promise<void> {
    return this.placement.call('labelChat', [chatId, change]);
  }
}
