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
import { actorOf, audited, noAudit, type AuditPart } from '../audit/audit-part.js';
import type { Clock } from '../domain/clock.js';

const FlowBody = closed({ success: Type.Literal(true), instanceId: Type.String(), flow: FlowDocument, revision: Type.String(), updatedAt: IsoTime });
const FlowOrNoneBody = closed({
  success: Type.Literal(true),
  instanceId: Type.String(),
  flow: Type.Union([FlowDocument, Type.Null()]),
  revision: Type.Union([Type.String(), Type.Null()]),
  updatedAt: Type.Union([IsoTime, Type.Null()]),
});
const HandoverSchema = closed({
  phone: Phone,
  chatId: ChatId,
  fromName: Type.Union([Type.String(), Type.Null()]),
  flow: Type.String(),
  node: Type.String(),
  openedAt: IsoTime,
  expiresAt: IsoTime,
  claimedBy: Type.Union([Type.String(), Type.Null()], { description: 'Who claimed the chat in the inbox (`operator:NAME`, `secret`, `instance:ID`), or null.' }),
});
const ClaimInput = closed({
  chatId: ChatId,
  claim: Type.Optional(Type.Boolean({ default: true, description: 'false lets go of the chat (the handover stays open until released or timed out).' })),
});
const FlowQuery = closed({
  optional: Type.Optional(Type.Boolean({ description: 'true: no flow answers 200 with `flow` null instead of 404 (for pages that show either).' })),
});
const ReleaseInput = closed({ phone: Type.Optional(Phone), chatId: Type.Optional(ChatId) });

function flowBody(instanceId: string, stored: StoredFlow) {
  return { success: true as const, instanceId, flow: stored.flow, revision: stored.revision, updatedAt: stored.updatedAt };
}

/**
 * PUT/GET/DELETE /api/{id}/flow, GET /api/{id}/handovers and POST /api/{id}/handover/release,
 * all with the instance key.
 */
export function flowRoutes(definitions: FlowDefinitions, handovers: HandoverBook, more: { audit?: AuditPart; clock?: Clock; handoverTimeoutMinutes?: number } = {}): RouteDef[] {
  const audit = more.audit ?? noAudit;
  const now = (): number => more.clock?.now() ?? Date.now();
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
      async handle({ instance, body, principal }) {
        return flowBody(instance.id, await audited(audit, principal, 'flow.set', { instanceId: instance.id, target: body.name }, () => definitions.set(instance.id, body)));
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/:id/flow',
      auth: 'instance',
      operationId: 'getFlow',
      summary: 'The chatbot flow',
      tags: ['flows'],
      query: FlowQuery,
      response: { description: 'The stored flow (with `optional=true` and no flow: `flow` null).', schema: FlowOrNoneBody },
      errors: ['NOT_FOUND', 'STORE_CORRUPT'],
      async handle({ instance, query }) {
        const stored = await definitions.get(instance.id);
        if (!stored && query.optional === true) return { success: true, instanceId: instance.id, flow: null, revision: null, updatedAt: null };
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
      async handle({ instance, principal }) {
        return { success: true, instanceId: instance.id, deleted: await audited(audit, principal, 'flow.clear', { instanceId: instance.id }, () => definitions.clear(instance.id)) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/:id/handovers',
      auth: 'instance',
      operationId: 'listHandovers',
      summary: 'Open handovers, oldest first',
      tags: ['flows'],
      response: {
        description: 'Open handovers.',
        schema: closed({ success: Type.Literal(true), instanceId: Type.String(), handovers: Type.Array(HandoverSchema) }),
        example: {
          success: true,
          instanceId: 'inst_k3J9xQ2mVb7n',
          handovers: [
            {
              phone: '+15551234567',
              chatId: '15551234567@s.whatsapp.net',
              fromName: 'Ann',
              flow: 'support',
              node: 'agent',
              openedAt: '2026-01-02T09:00:00.000Z',
              expiresAt: '2026-01-02T10:00:00.000Z',
              claimedBy: 'operator:bob',
            },
          ],
        },
      },
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
      async handle({ instance, body, principal }) {
        if (body.phone === undefined && body.chatId === undefined) throw new GatewayError('MISSING_FIELD', 'phone or chatId is required');
        const released = await audited(audit, principal, 'handover.release', { instanceId: instance.id, target: (body.chatId ?? body.phone)! }, async () => {
          const r = await handovers.release(instance.id, { ...(body.phone !== undefined ? { phone: body.phone } : {}), ...(body.chatId !== undefined ? { chatId: body.chatId } : {}) });
          if (r.length === 0) throw new GatewayError('NOT_FOUND', `no open handover for ${body.phone ?? body.chatId}`);
          return r;
        });
        return { success: true, instanceId: instance.id, phone: released[0]!.phone, chatId: released[0]!.chatId, released: true };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/:id/handover/claim',
      auth: 'instance',
      operationId: 'claimChat',
      summary: 'Claim a chat in the inbox (a person answers it), or let go of it',
      description:
        'A claim names who works on the chat (`claimedBy`, shown in GET /handovers) and opens a handover when none is open, so the bot stays quiet for `flows.handoverTimeoutMinutes` (a later claim extends it). `"claim": false` lets go of it; the chat goes back to the bot with POST /handover/release.',
      tags: ['flows'],
      body: ClaimInput,
      example: { chatId: '15551234567@s.whatsapp.net' },
      response: {
        description: 'The handover of the chat as it is now (null after letting go of a chat without one).',
        schema: closed({ success: Type.Literal(true), instanceId: Type.String(), handover: Type.Union([HandoverSchema, Type.Null()]) }),
        example: {
          success: true,
          instanceId: 'inst_k3J9xQ2mVb7n',
          handover: {
            phone: '+15551234567',
            chatId: '15551234567@s.whatsapp.net',
            fromName: null,
            flow: '',
            node: '',
            openedAt: '2026-01-02T09:00:00.000Z',
            expiresAt: '2026-01-02T10:00:00.000Z',
            claimedBy: 'operator:ann',
          },
        },
      },
      errors: ['MISSING_FIELD', 'INVALID_FIELD'],
      async handle({ instance, body, principal }) {
        const claim = body.claim ?? true;
        const at = now();
        const until = new Date(at + (more.handoverTimeoutMinutes ?? 60) * 60_000).toISOString();
        const digits = /^(\d+)@s\.whatsapp\.net$/.exec(body.chatId)?.[1];
        const handover = await audited(audit, principal, claim ? 'handover.claim' : 'handover.unclaim', { instanceId: instance.id, target: body.chatId }, () =>
          handovers.claim(
            instance.id,
            body.chatId,
            claim ? actorOf(principal) : null,
            () => ({ chatId: body.chatId, phone: digits ? `+${digits}` : '', flow: '', node: '', openedAt: new Date(at).toISOString(), expiresAt: until }),
            until,
          ),
        );
        return { success: true, instanceId: instance.id, handover: handover ? handoverView(handover) : null };
      },
    }),
  ];
}
