import Type from 'typebox';
import type { Core } from '../core/core.js';
import { GatewayError } from '../domain/errors.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { MessageId, Phone, closed } from '../schemas/common.js';
import { MAX_TEXT } from '../schemas/send.js';
import { InstanceStatusSchema } from '../schemas/events.js';
import { SandboxConnection } from './sandbox.js';

const StatusOnly = closed({ success: Type.Literal(true), instanceId: Type.String(), status: InstanceStatusSchema });
const InboundInput = closed({
  from: Phone,
  message: Type.String({ minLength: 1, maxLength: MAX_TEXT }),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
});
const InboundBody = closed({ success: Type.Literal(true), instanceId: Type.String(), messageId: MessageId });
const SentItem = closed({
  messageId: MessageId,
  to: Type.String(),
  phone: Type.Union([Phone, Type.Null()]),
  type: Type.String(),
  message: Type.Optional(Type.String()),
  caption: Type.Optional(Type.String()),
  sentAt: Type.String(),
});
const SentBody = closed({ success: Type.Literal(true), instanceId: Type.String(), messages: Type.Array(SentItem) });

/** Drive a simulated connection: scan, disconnect, receive a message, list what was sent. */
export function sandboxRoutes(core: Core): RouteDef[] {
  const sandboxOf = (id: string, sandbox: boolean): SandboxConnection => {
    const connection = core.manager.get(id)?.connection;
    if (!sandbox) throw new GatewayError('NOT_FOUND', 'sandbox routes exist only for sandbox instances');
    if (!(connection instanceof SandboxConnection)) throw new GatewayError('CONNECTION_NOT_READY', 'the sandbox connection is not running in this process (is the daemon running?)');
    return connection;
  };
  const common = { auth: 'instance' as const, tags: ['sandbox'], errors: ['NOT_FOUND'] as const };
  return [
    defineRoute({
      ...common,
      method: 'POST',
      path: '/api/:id/sandbox/scan',
      operationId: 'sandboxScan',
      summary: 'The simulated phone scans the QR: the instance connects',
      response: { description: 'Connected.', schema: StatusOnly },
      async handle({ instance }) {
        const conn = sandboxOf(instance.id, instance.sandbox);
        await conn.scan();
        return { success: true, instanceId: instance.id, status: core.status.view(instance).status };
      },
    }),
    defineRoute({
      ...common,
      method: 'POST',
      path: '/api/:id/sandbox/disconnect',
      operationId: 'sandboxDisconnect',
      summary: 'The simulated connection drops; scan reconnects',
      response: { description: 'Disconnected.', schema: StatusOnly },
      handle({ instance }) {
        sandboxOf(instance.id, instance.sandbox).disconnect();
        return { success: true, instanceId: instance.id, status: core.status.view(instance).status };
      },
    }),
    defineRoute({
      ...common,
      method: 'POST',
      path: '/api/:id/sandbox/inbound',
      operationId: 'sandboxInbound',
      summary: 'Play a received message (webhook, chatbot flows, history)',
      body: InboundInput,
      example: { from: '+15551234567', message: 'hi', name: 'Ann' },
      response: { description: 'Received and stored.', schema: InboundBody },
      errors: ['NOT_FOUND', 'MISSING_FIELD', 'INVALID_FIELD', 'INVALID_PHONE', 'CONNECTION_NOT_READY'],
      async handle({ instance, body }) {
        const received = await sandboxOf(instance.id, instance.sandbox).inbound({ from: body.from, message: body.message, ...(body.name ? { name: body.name } : {}) });
        return { success: true, instanceId: instance.id, messageId: received.messageId };
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      path: '/api/:id/sandbox/sent',
      operationId: 'sandboxSent',
      summary: 'What the instance has sent, oldest first (bounded)',
      response: { description: 'The sent messages.', schema: SentBody },
      handle({ instance }) {
        return { success: true, instanceId: instance.id, messages: [...sandboxOf(instance.id, instance.sandbox).sent()] };
      },
    }),
  ];
}
