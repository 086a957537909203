import Type from 'typebox';
import { GatewayError } from '../domain/errors.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { ChatId, IsoTime, Phone, closed } from '../schemas/common.js';
import type { FlowDefinitions } from './definitions.js';
import { EXAMPLE_FLOW } from './example.js';
import type { HandoverBook } from './handovers.js';
import { FlowDocument, parseFlowBody } from './schema.js';
import { handoverView } from './handover-view.js';
import type { StoredFlow } from './types.js';

const FlowBody = closed({ success: Type.Literal(true), instanceId: Type.String(), flow: FlowDocument, revision: Type.String(), updatedAt: IsoTime });
const HandoverSchema = closed({
  phone: Phone,
  chatId: ChatId,
  fromName: Type.Union([Type.String(), Type.Null()]),
  flow: Type.String(),
  node: Type.String(),
  openedAt: IsoTime,
  expiresAt: IsoTime,
});
const ReleaseInput = closed({ phone: Type.Optional(Phone), chatId: Type.Optional(ChatId) });

function flowBody(instanceId: string, stored: StoredFlow) {
  return { success: true as const, instanceId, flow: stored.flow, revision: stored.revision, updatedAt: stored.updatedAt };
}

/**
 * PUT/GET/DELETE /api/{id}/flow, GET /api/{id}/handovers and POST /api/{id}/handover/release,
 * all with the instance key.
 */
export function flowRoutes(definitions: FlowDefinitions, handovers: HandoverBook): RouteDef[] {
  return [
    defineRoute({
      method: 'PUT',
      path: '/api/:id/flow',
      auth: 'instance',
      operationId: 'setFlow',
      summary: 'Set (and activate) the chatbot flow',
      description: 'Message, condition and handover nodes; see docs/flows.md. A validation error names the node at fault (`error.node`).',
      tags: ['flows'],
      body: FlowDocument,
      parse: parseFlowBody,
      example: EXAMPLE_FLOW,
      response: { description: 'The stored flow.', schema: FlowBody },
      errors: ['INVALID_FIELD', 'INVALID_JSON'],
      async handle({ instance, body }) {
        return flowBody(instance.id, await definitions.set(instance.id, body));
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/:id/flow',
      auth: 'instance',
      operationId: 'getFlow',
      summary: 'The chatbot flow',
      tags: ['flows'],
      response: { description: 'The stored flow.', schema: FlowBody },
      errors: ['NOT_FOUND', 'STORE_CORRUPT'],
      async handle({ instance }) {
        const stored = await definitions.get(instance.id);
        if (!stored) throw new GatewayError('NOT_FOUND', 'no flow is set for this instance');
        return flowBody(instance.id, stored);
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/:id/flow',
      auth: 'instance',
      operationId: 'clearFlow',
      summary: 'Remove the chatbot flow (the bot stops answering)',
      tags: ['flows'],
      response: { description: 'Removed.', schema: closed({ success: Type.Literal(true), instanceId: Type.String(), deleted: Type.Boolean() }) },
      errors: ['STORAGE_UNAVAILABLE'],
      async handle({ instance }) {
        return { success: true, instanceId: instance.id, deleted: await definitions.clear(instance.id) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/:id/handovers',
      auth: 'instance',
      operationId: 'listHandovers',
      summary: 'Open handovers, oldest first',
      tags: ['flows'],
      response: { description: 'Open handovers.', schema: closed({ success: Type.Literal(true), instanceId: Type.String(), handovers: Type.Array(HandoverSchema) }) },
      async handle({ instance }) {
        return { success: true, instanceId: instance.id, handovers: (await handovers.list(instance.id)).map(handoverView) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/:id/handover/release',
      auth: 'instance',
      operationId: 'releaseHandover',
      summary: 'Give a chat back to the bot',
      tags: ['flows'],
      body: ReleaseInput,
      example: { phone: '+15551234567' },
      response: { description: 'Released.', schema: closed({ success: Type.Literal(true), instanceId: Type.String(), phone: Type.Union([Phone, Type.Null()]), chatId: ChatId, released: Type.Literal(true) }) },
      errors: ['MISSING_FIELD', 'INVALID_PHONE', 'INVALID_FIELD', 'NOT_FOUND'],
      async handle({ instance, body }) {
        if (body.phone === undefined && body.chatId === undefined) throw new GatewayError('MISSING_FIELD', 'phone or chatId is required');
        const released = await handovers.release(instance.id, { ...(body.phone !== undefined ? { phone: body.phone } : {}), ...(body.chatId !== undefined ? { chatId: body.chatId } : {}) });
        if (released.length === 0) throw new GatewayError('NOT_FOUND', `no open handover for ${body.phone ?? body.chatId}`);
        return { success: true, instanceId: instance.id, phone: released[0]!.phone, chatId: released[0]!.chatId, released: true };
      },
    }),
  ];
}
