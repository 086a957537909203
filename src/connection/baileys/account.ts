import type { BinaryNode, WAMessage, WAMessageKey, proto } from '@whiskeysockets/baileys';
import type { Logger } from 'pino';
import type { AccountEvent, GroupAction } from '../../schemas/account-events.js';
import type { CreatedGroup, GroupSettings, ParticipantResult, PollKey } from '../account-types.js';
import type { ConnectionHooks } from '../types.js';
import { callEvent, groupEvents, presenceEvent, removesMember } from './account-events.js';
import * as groups from './groups.js';
import type { InboundQueue } from './inbound.js';
import { BoundedMap } from '../../domain/bounded-map.js';
import type { LidResolver } from './mapping.js';
import type { SocketLike } from './options.js';
import { decryptVote, pollKeyOf, votedPoll } from './polls.js';
import { SenderKeyRotation } from './sender-keys.js';

/** What the account part needs from the connection around it. */
export interface AccountContext {
  hooks: ConnectionHooks;
  inbound: InboundQueue;
  log: Logger;
  now: () => number;
  /** A message this connection sent recently (Baileys' getMessage cache): our polls' secrets are in it. */
  recentSend(key: WAMessageKey): proto.IMessage | undefined;
}

/**
 * Everything a Baileys connection does around the account besides messages: groups (create,
 * settings, participants, invite links, join, leave, picture; sender-key rotation when someone
 * leaves), call offers and rejects, presence (subscriptions, and what people show), poll votes.
 * The connection hands it each new socket (`attach`) and calls its actions on the live one.
 */
export class BaileysAccount {
  readonly rotation = new SenderKeyRotation();
  /** Call offers not over yet: rejecting one needs its caller. */
  private readonly calls = new BoundedMap<string, string>(500);
  /** The other address of who made each recent group change, by notification id (see groupEvents). */
  private readonly actorAlts = new BoundedMap<string, string>(500);

  constructor(private readonly ctx: AccountContext) {}

  private emit(event: AccountEvent): Promise<void> {
    return (this.ctx.hooks.onEvent?.(event) ?? Promise.resolve()).catch((err: unknown) => this.ctx.log.error({ err, type: event.type }, 'an account event was not stored'));
  }

  attach(sock: SocketLike, resolver: LidResolver): void {
    const { inbound, log, now } = this.ctx;
    sock.ev.on('messages.upsert', ({ messages }) => {
      for (const msg of messages) {
        if (msg.messageStubType && msg.key.remoteJid?.endsWith('@g.us')) {
          // In arrival order with the group's messages: "X was added" before X's first message.
          inbound.run(async () => {
            if (removesMember(msg)) await this.rotation.rotate(sock, msg.key.remoteJid!).catch((err: unknown) => log.error({ err }, 'could not rotate the sender key of a group'));
            for (const event of await groupEvents(msg, sock.user, resolver, now, (id) => this.actorAlts.get(id))) await this.emit(event);
          });
        } else if (votedPoll(msg)) {
          inbound.run(() => this.vote(sock, msg, resolver));
        }
      }
    });
    sock.ev.on('call', (calls) => {
      for (const call of calls) {
        if (call.status === 'offer') this.calls.set(call.id, call.from);
        else if (call.status !== 'ringing' && call.status !== 'preaccept' && call.status !== 'transport' && call.status !== 'relaylatency') this.calls.delete(call.id);
        void callEvent(call, resolver).then((event) => (event ? this.emit(event) : undefined));
      }
    });
    // Raw stanzas: Baileys' presence.update folds a paused chat state into `available`.
    const onPresence = (node: BinaryNode): void => {
      void presenceEvent(node, sock.user, resolver)
        .then((event) => (event ? this.emit(event) : undefined))
        .catch((err: unknown) => log.debug({ err }, 'a presence stanza was not understood'));
    };
    // Before Baileys makes a stub message of it (its listener queues the work; this one runs at once).
    sock.ws?.on?.('CB:notification', (node: BinaryNode) => {
      const alt = node.attrs.participant_pn ?? node.attrs.participant_lid;
      if (node.attrs.type === 'w:gp2' && node.attrs.id && alt) this.actorAlts.set(node.attrs.id, alt);
    });
    sock.ws?.on?.('CB:presence', onPresence);
    sock.ws?.on?.('CB:chatstate', onPresence);
  }

  /** A vote: decrypted with its poll's secret (a poll sent lately, else the one history kept). */
  private async vote(sock: SocketLike, msg: WAMessage, resolver: LidResolver): Promise<void> {
    const pollId = votedPoll(msg)!;
    const recent = this.ctx.recentSend({ id: pollId, fromMe: true });
    const key: PollKey | null = (recent ? pollKeyOf(recent, true, null) : null) ?? (await this.ctx.hooks.pollOf?.(pollId)) ?? null;
    if (!key) {
      this.ctx.log.info({ pollId }, 'a vote on a poll the gateway does not know (not sent or received through it, or expired): dropped');
      return;
    }
    const vote = await decryptVote(msg, key, sock.user, resolver, this.ctx.now);
    if (!vote) {
      this.ctx.log.warn({ pollId }, 'a vote could not be decrypted with its poll\'s secret: dropped');
      return;
    }
    await this.ctx.hooks.onUpdate(vote);
  }

  async rejectCall(sock: SocketLike, callId: string): Promise<boolean> {
    const from = this.calls.get(callId);
    if (from === undefined || !sock.rejectCall) return false;
    await sock.rejectCall(callId, from);
    this.calls.delete(callId);
    return true;
  }

  async subscribePresence(sock: SocketLike, chatId: string): Promise<void> {
    if (!sock.presenceSubscribe) throw new Error('this socket has no presenceSubscribe');
    await sock.presenceSubscribe(chatId);
  }

  createGroup(sock: SocketLike, subject: string, participants: string[]): Promise<CreatedGroup> {
    return groups.createGroup(sock, subject, participants);
  }

  updateGroup(sock: SocketLike, chatId: string, settings: GroupSettings): Promise<void> {
    return groups.updateGroup(sock, chatId, settings);
  }

  groupParticipants(sock: SocketLike, chatId: string, action: GroupAction, participants: string[]): Promise<ParticipantResult[]> {
    return groups.groupParticipants(sock, this.rotation, chatId, action, participants);
  }
}
