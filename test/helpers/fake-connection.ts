import type { Connection, ConnectionFactory, ConnectionHooks, GroupInfo, GroupSummary, LogoutOutcome, MessageRef, NumberCheck, Outgoing } from '../../src/connection/types.js';
import type { CreatedGroup, ParticipantResult } from '../../src/connection/account-types.js';
import { GatewayError } from '../../src/domain/errors.js';
import type { ConnectionStatus } from '../../src/domain/types.js';
import { NoAccountActions } from './no-account-actions.js';

/** A scriptable non-sandbox connection for HTTP tests (the Baileys one has its own tests). */
export class FakeConnection extends NoAccountActions implements Connection {
  status: ConnectionStatus = 'disconnected';
  qr: string | null = null;
  reason: string | null = null;
  readonly sent: Outgoing[] = [];
  failNextSend = false;

  constructor(
    readonly instanceId: string,
    readonly hooks: ConnectionHooks,
  ) {
    super();
  }

  set(to: ConnectionStatus, qr: string | null = null): void {
    const from = this.status;
    this.status = to;
    this.qr = qr;
    this.hooks.onStatus({ from, to });
    if (qr) this.hooks.onQr(qr);
  }
  /** Like the real connections: starting a running connection changes nothing. */
  start(): void {
    if (this.status === 'disconnected') this.set('initializing');
  }
  async stop(): Promise<void> {
    this.set('disconnected');
  }
  async logout(): Promise<LogoutOutcome> {
    this.set('disconnected');
    return 'logged-out';
  }
  async send(message: Outgoing): Promise<{ messageId: string }> {
    if (this.status !== 'connected') throw new GatewayError('CONNECTION_NOT_READY', 'not connected');
    if (this.failNextSend) {
      this.failNextSend = false;
      throw new Error('socket closed while sending');
    }
    this.sent.push(message);
    return { messageId: message.id };
  }
  /** What the instance did besides sending, in order. */
  readonly actions: Array<{ action: string; target?: MessageRef; value?: string }> = [];
  private ready(): void {
    if (this.status !== 'connected') throw new GatewayError('CONNECTION_NOT_READY', 'not connected');
  }
  async react(target: MessageRef, emoji: string): Promise<void> {
    this.ready();
    this.actions.push({ action: 'react', target, value: emoji });
  }
  async edit(target: MessageRef, text: string): Promise<void> {
    this.ready();
    this.actions.push({ action: 'edit', target, value: text });
  }
  async remove(target: MessageRef): Promise<void> {
    this.ready();
    this.actions.push({ action: 'delete', target });
  }
  async markRead(targets: MessageRef[]): Promise<void> {
    this.ready();
    for (const target of targets) this.actions.push({ action: 'read', target });
  }
  async presence(chatId: string, state: string): Promise<void> {
    this.ready();
    this.actions.push({ action: 'presence', value: `${chatId} ${state}` });
  }
  async checkNumbers(phones: string[]): Promise<NumberCheck[]> {
    this.ready();
    return phones.map((phone) => ({ phone, exists: true, chatId: `${phone.slice(1)}@s.whatsapp.net` }));
  }
  async groups(): Promise<GroupSummary[]> {
    this.ready();
    return [];
  }
  async group(): Promise<GroupInfo | null> {
    this.ready();
    return null;
  }
  // Groups, calls and presence subscriptions: recorded; the Baileys and sandbox ones have their own tests.
  async createGroup(subject: string, participants: string[]): Promise<CreatedGroup> {
    this.ready();
    this.actions.push({ action: 'create-group', value: subject });
    return { chatId: '120363000000000001@g.us', subject, participants: participants.map((jid) => ({ jid, status: 'added' as const })) };
  }
  async updateGroup(chatId: string): Promise<void> {
    this.ready();
    this.actions.push({ action: 'update-group', value: chatId });
  }
  async groupParticipants(chatId: string, action: string, participants: string[]): Promise<ParticipantResult[]> {
    this.ready();
    this.actions.push({ action: `participants-${action}`, value: chatId });
    return participants.map((jid) => ({ jid, status: 'failed' as const, error: 'fake' }));
  }
  async groupInvite(): Promise<string> {
    this.ready();
    return 'FakeInviteCode0000000A';
  }
  async joinGroup(): Promise<string> {
    this.ready();
    return '120363000000000001@g.us';
  }
  async leaveGroup(chatId: string): Promise<void> {
    this.ready();
    this.actions.push({ action: 'leave-group', value: chatId });
  }
  async groupPicture(chatId: string): Promise<void> {
    this.ready();
    this.actions.push({ action: 'group-picture', value: chatId });
  }
  async rejectCall(): Promise<boolean> {
    this.ready();
    return false;
  }
  async subscribePresence(chatId: string): Promise<void> {
    this.ready();
    this.actions.push({ action: 'subscribe', value: chatId });
  }
}

/** A factory that remembers the connections it made, by instance id. */
export function fakeFactory(): { factory: () => ConnectionFactory; made: Map<string, FakeConnection> } {
  const made = new Map<string, FakeConnection>();
  return {
    made,
    factory: () => (record, hooks) => {
      const c = new FakeConnection(record.id, hooks);
      made.set(record.id, c);
      return c;
    },
  };
}
