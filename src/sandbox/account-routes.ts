import Type from 'typebox';
import { GatewayError } from '../domain/errors.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { E164_PATTERN, IsoTime, MessageId, Phone, closed } from '../schemas/common.js';
import { GROUP_ACTIONS, PRESENCE_STATES } from '../schemas/account-events.js';
import { ParticipantRef, Subject } from '../schemas/groups.js';
import type { SandboxConnection } from '../connection/sandbox.js';

const GROUP_ID_PATTERN = '^[0-9]{5,25}(-[0-9]{5,15})?@g\\.us$';
const GroupId = Type.String({ pattern: GROUP_ID_PATTERN, description: 'A group id.', examples: ['120363041234567890@g.us'] });

const CallInput = closed({
  from: Phone,
  video: Type.Optional(Type.Boolean({ description: 'A video call (default a voice call).' })),
  groupId: Type.Optional(Type.String({ pattern: GROUP_ID_PATTERN, description: 'A group call, from within this group.' })),
});
const CallBody = closed({ success: Type.Literal(true), instanceId: Type.String(), callId: Type.String() });

const PresenceInput = closed({
  from: Phone,
  state: Type.Enum([...PRESENCE_STATES]),
  chatId: Type.Optional(Type.String({ pattern: GROUP_ID_PATTERN, description: 'A group the state is shown in (typing in a group).' })),
  lastSeen: Type.Optional(IsoTime),
});

const VoteInput = closed({
  messageId: MessageId,
  from: Phone,
  selected: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 12, uniqueItems: true, description: 'Option texts; [] withdraws the vote.' }),
});

const GroupEventInput = closed({
  chatId: GroupId,
  by: Type.Optional(Type.String({ pattern: E164_PATTERN, description: "Who did it (default the group's first admin)." })),
  action: Type.Optional(Type.Enum([...GROUP_ACTIONS])),
  participants: Type.Optional(Type.Array(ParticipantRef, { minItems: 1, maxItems: 256, uniqueItems: true, description: 'Whom `action` is about; the sandbox account is +10000000000 (adding it is how it joins).' })),
  subject: Type.Optional(Subject),
  description: Type.Optional(Type.String({ maxLength: 2048 })),
  announce: Type.Optional(Type.Boolean()),
  locked: Type.Optional(Type.Boolean()),
});

const Ok = closed({ success: Type.Literal(true), instanceId: Type.String() });
const OK_EXAMPLE = { success: true, instanceId: 'inst_k3J9xQ2mVb7n' };

/**
 * Playing the other side of a sandbox account besides messages: someone calls, shows their
 * presence, votes on a poll the instance sent, or changes a group. Each reaches webhooks, live
 * events and history exactly as the same thing from WhatsApp does.
 */
export function sandboxAccountRoutes(sandboxOf: (id: string, sandbox: boolean) => SandboxConnection): RouteDef[] {
  const common = { auth: 'instance' as const, tags: ['sandbox'] };
  return [
    defineRoute({
      ...common,
      method: 'POST',
      path: '/api/:id/sandbox/call',
      operationId: 'sandboxCall',
      summary: 'Play an incoming call (call.received); reject it with POST /calls/{callId}/reject',
      body: CallInput,
      example: { from: '+15551234567', video: false },
      response: { description: 'Offered.', schema: CallBody, example: { ...OK_EXAMPLE, callId: 'C0A1B2C3D4E5F60718293A4B5C6D7E8F' } },
      errors: ['NOT_FOUND', 'MISSING_FIELD', 'INVALID_FIELD', 'INVALID_PHONE', 'CONNECTION_NOT_READY'],
      async handle({ instance, body }) {
        const conn = sandboxOf(instance.id, instance.sandbox);
        requireConnected(conn);
        const callId = await conn.account.offerCall(body);
        return { success: true, instanceId: instance.id, callId };
      },
    }),
    defineRoute({
      ...common,
      method: 'POST',
      path: '/api/:id/sandbox/presence',
      operationId: 'sandboxPresence',
      summary: "Play a person's presence: online, offline (with last seen), typing, recording, paused (presence.updated)",
      body: PresenceInput,
      example: { from: '+15551234567', state: 'typing' },
      response: { description: 'Played.', schema: Ok, example: OK_EXAMPLE },
      errors: ['NOT_FOUND', 'MISSING_FIELD', 'INVALID_FIELD', 'INVALID_PHONE', 'CONNECTION_NOT_READY'],
      async handle({ instance, body }) {
        const conn = sandboxOf(instance.id, instance.sandbox);
        requireConnected(conn);
        await conn.account.playPresence(body);
        return { success: true, instanceId: instance.id };
      },
    }),
    defineRoute({
      ...common,
      method: 'POST',
      path: '/api/:id/sandbox/vote',
      operationId: 'sandboxVote',
      summary: 'Play a vote on a poll the instance sent (poll.vote; GET /messages/{messageId} shows the votes)',
      body: VoteInput,
      example: { messageId: '3EB0C767F26D4C4A5B8A', from: '+15551234567', selected: ['Pizza'] },
      response: { description: 'Voted.', schema: Ok, example: OK_EXAMPLE },
      errors: ['NOT_FOUND', 'MISSING_FIELD', 'INVALID_FIELD', 'INVALID_PHONE', 'CONNECTION_NOT_READY'],
      async handle({ instance, body }) {
        const conn = sandboxOf(instance.id, instance.sandbox);
        requireConnected(conn);
        await conn.account.playVote(conn.sentPoll(body.messageId), body);
        return { success: true, instanceId: instance.id };
      },
    }),
    defineRoute({
      ...common,
      method: 'POST',
      path: '/api/:id/sandbox/group-event',
      operationId: 'sandboxGroupEvent',
      summary: 'Play what someone else does to a group: participants added, removed, promoted, demoted (the sandbox account, +10000000000, included), or its info and settings changed',
      description: 'An unknown group is made on the spot with `by` as its admin; adding +10000000000 is how the instance joins it (group.joined).',
      body: GroupEventInput,
      example: { chatId: '120363041234567890@g.us', by: '+15557654321', action: 'add', participants: ['+15551234567'] },
      response: { description: 'Played.', schema: Ok, example: OK_EXAMPLE },
      errors: ['NOT_FOUND', 'MISSING_FIELD', 'INVALID_FIELD', 'INVALID_PHONE', 'CONNECTION_NOT_READY'],
      async handle({ instance, body }) {
        const conn = sandboxOf(instance.id, instance.sandbox);
        requireConnected(conn);
        if ((body.action === undefined) !== (body.participants === undefined)) throw new GatewayError('MISSING_FIELD', 'action and participants go together');
        const changes = [body.action, body.subject, body.description, body.announce, body.locked].filter((v) => v !== undefined);
        if (changes.length === 0) throw new GatewayError('MISSING_FIELD', 'give action and participants, or subject, description, announce or locked');
        await conn.account.groups.play(body);
        return { success: true, instanceId: instance.id };
      },
    }),
  ];
}

function requireConnected(conn: SandboxConnection): void {
  if (conn.status !== 'connected') throw new GatewayError('CONNECTION_NOT_READY', `instance is ${conn.status}, not connected`);
}
