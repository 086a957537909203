import { randomBytes } from 'node:crypto';
import { GatewayError } from '../domain/errors.js';
import type { PresenceState } from '../schemas/account-events.js';
import { SandboxGroups, jidOf, personOf } from './sandbox-groups.js';
import type { ConnectionHooks } from './types.js';

/** A call the sandbox offered (POST /sandbox/call), until it is rejected. */
interface OfferedCall {
  callId: string;
  chatId: string;
  from: string;
}

/** A poll the sandbox instance sent, as the vote route needs it. */
export interface SentPoll {
  messageId: string;
  to: string;
  options: string[];
  multiple: boolean;
}

/**
 * What the other side of a sandbox account does besides writing messages: groups (see
 * sandbox-groups.ts), calls, presence and poll votes. Each is reported through the connection's
 * hooks exactly as the Baileys connection reports WhatsApp's.
 */
export class SandboxAccount {
  readonly groups: SandboxGroups;
  private readonly calls = new Map<string, OfferedCall>();

  constructor(
    private readonly hooks: ConnectionHooks,
    private readonly now: () => number,
  ) {
    this.groups = new SandboxGroups((event) => this.hooks.onEvent?.(event) ?? Promise.resolve(), now);
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }

  /** `from` calls the account (in a group call, from within `groupId`); resolves with the call id. */
  async offerCall(input: { from: string; video?: boolean; groupId?: string }): Promise<string> {
    const callId = randomBytes(16).toString('hex').toUpperCase();
    const sender = jidOf(input.from);
    const chatId = input.groupId ?? sender;
    this.calls.set(callId, { callId, chatId, from: sender });
    if (this.calls.size > 1000) this.calls.delete(this.calls.keys().next().value as string);
    await this.hooks.onEvent?.({
      type: 'call.received',
      data: { callId, chatId, from: personOf(sender).phone ?? null, sender, isVideo: input.video ?? false, isGroup: input.groupId !== undefined, timestamp: this.iso() },
    });
    return callId;
  }

  /** Rejects an offered call; false for a call that is over or was never offered. */
  rejectCall(callId: string): { chatId: string } | null {
    const call = this.calls.get(callId);
    if (!call) return null;
    this.calls.delete(callId);
    return { chatId: call.chatId };
  }

  /** `from`'s presence as the account would see it (in `chatId`, a group, when given). */
  async playPresence(input: { from: string; state: PresenceState; chatId?: string; lastSeen?: string }): Promise<void> {
    const sender = jidOf(input.from);
    await this.hooks.onEvent?.({
      type: 'presence.updated',
      data: { chatId: input.chatId ?? sender, from: personOf(sender).phone ?? null, sender, state: input.state, ...(input.lastSeen !== undefined ? { lastSeen: input.lastSeen } : {}) },
    });
  }

  /** `from` votes on a poll the instance sent: `selected` are option texts ([] withdraws the vote). */
  async playVote(poll: SentPoll | undefined, input: { messageId: string; from: string; selected: string[] }): Promise<void> {
    if (!poll) throw new GatewayError('NOT_FOUND', `this sandbox has not sent a poll ${JSON.stringify(input.messageId.slice(0, 60))}`);
    const unknown = input.selected.find((s) => !poll.options.includes(s));
    if (unknown !== undefined) throw new GatewayError('INVALID_FIELD', `selected: ${JSON.stringify(unknown.slice(0, 100))} is not an option of this poll`);
    if (!poll.multiple && input.selected.length > 1) throw new GatewayError('INVALID_FIELD', 'selected: this poll takes one option');
    await this.hooks.onUpdate({ kind: 'vote', messageId: poll.messageId, chatId: poll.to, voter: personOf(jidOf(input.from)), selected: input.selected, timestamp: this.iso() });
  }
}
