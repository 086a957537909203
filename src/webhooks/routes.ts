import Type from 'typebox';
import type { GatewayConfig } from '../config/schema.js';
import type { InstanceRepository } from '../storage/ports/instances.js';
import { GatewayError } from '../domain/errors.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { closed } from '../schemas/common.js';
import { WebhookBody, WebhookInput } from '../schemas/instance.js';
import { DeliveriesBody, DeliveriesQuery, RedeliverBody, WebhookTestBody } from '../schemas/webhook.js';
import type { WebhookDeliverer } from './deliverer.js';
import { summarise } from './delivery-record.js';
import { applyWebhookChange, headersChanged, webhookView } from './settings.js';
import { audited, noAudit, type AuditPart } from '../audit/audit-part.js';

/** The host of a webhook URL: what the audit log names (a URL may carry a token or a password). */
const hostOf = (url: string | undefined): string | undefined => {
  try {
    return url === undefined ? undefined : new URL(url).host;
  } catch {
    return undefined;
  }
};

/** The instance's webhook (where, signed how, which events) and its deliveries. */
export function webhookRoutes(core: { config: Pick<GatewayConfig, 'webhooks'>; instances: Pick<InstanceRepository, 'modify'>; audit?: AuditPart }, deliverer: WebhookDeliverer): RouteDef[] {
  const audit = core.audit ?? noAudit;
  return [
    defineRoute({
      method: 'PUT',
      path: '/api/:id/webhook',
      auth: 'instance',
      operationId: 'setWebhook',
      summary: 'Set where events go, the secret that signs them, which events and chats, and headers to send',
      description:
        'Fields left out keep their value: a new url alone keeps the secret, the events, the headers and the filters. `"secret": null` removes the secret; `"events": null` subscribes to every event type. ' +
        '`headers` (up to 10, e.g. `Authorization`) and `filters` replace the stored ones whole; `null` removes them. Header values are never shown back (GET shows the names) nor logged; each attempt sends the headers stored at that moment, and changing the URL or the headers makes pending retries due at once. ' +
        'An event about a chat the filters leave out is never queued for the webhook; events about no chat (`instance.status`, `qr.updated`) always are. A 400 INVALID_FIELD names a refused header.',
      tags: ['webhooks'],
      body: WebhookInput,
      example: {
        url: 'https://example.com/hook',
        secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        events: ['message.received', 'message.status'],
        headers: { Authorization: 'Bearer 9f86d081884c7d65' },
        filters: { ignoreGroups: true, ignoreChats: ['+15557654321'] },
      },
      response: { description: 'The webhook as stored (never the secret, header names only).', schema: WebhookBody },
      errors: ['MISSING_FIELD', 'INVALID_FIELD'],
      async handle({ instance, body, principal }) {
        const target = hostOf(body.url ?? instance.webhook?.url);
        return audited(audit, principal, 'webhook.set', { instanceId: instance.id, ...(target ? { target } : {}) }, async () => {
          const webhook = await applyWebhookChange(instance.webhook, body, core.config.webhooks.allowPrivateTargets);
          const record = await core.instances.modify(instance.id, (r) => {
            r.webhook = webhook;
          });
          // A rotated Authorization is what a receiver refusing with 401 waited for, like a new URL.
          if (webhook.url !== instance.webhook?.url || headersChanged(instance.webhook, webhook)) deliverer.retarget(instance.id);
          return { success: true, instanceId: instance.id, webhook: webhookView(record.webhook) };
        });
      },
    }),

    defineRoute({
      method: 'GET',
      path: '/api/:id/webhook',
      auth: 'instance',
      operationId: 'getWebhook',
      summary: 'The webhook as stored: where events go, whether they are signed, which events and chats, the names of its headers (never the secret or a header value)',
      tags: ['webhooks'],
      response: { description: 'The webhook, or null when none is set.', schema: WebhookBody },
      handle({ instance }) {
        return { success: true, instanceId: instance.id, webhook: webhookView(instance.webhook) };
      },
    }),

    defineRoute({
      method: 'POST',
      path: '/api/:id/webhook/test',
      auth: 'instance',
      operationId: 'testWebhook',
      summary: 'Queue a `webhook.test` event to the webhook, whatever its events filter, signed and retried like any event',
      description: 'The answer names the delivery; follow it in GET /webhook/deliveries. 404 NOT_FOUND when the instance has no webhook.',
      tags: ['webhooks'],
      response: { description: 'Queued.', schema: WebhookTestBody },
      errors: ['NOT_FOUND'],
      async handle({ instance }) {
        const record = await deliverer.test(instance.id);
        if (!record) throw new GatewayError('NOT_FOUND', 'this instance has no webhook: set one with PUT /api/{id}/webhook first');
        return { success: true, instanceId: instance.id, delivery: summarise(record) };
      },
    }),

    defineRoute({
      method: 'DELETE',
      path: '/api/:id/webhook',
      auth: 'instance',
      operationId: 'removeWebhook',
      summary: 'Stop sending events (deliveries already queued are still attempted)',
      tags: ['webhooks'],
      response: { description: 'Removed.', schema: closed({ success: Type.Literal(true), instanceId: Type.String(), webhook: Type.Null() }) },
      async handle({ instance, principal }) {
        return audited(audit, principal, 'webhook.remove', { instanceId: instance.id }, async () => {
          await core.instances.modify(instance.id, (r) => {
            r.webhook = null;
          });
          return { success: true, instanceId: instance.id, webhook: null };
        });
      },
    }),

    defineRoute({
      method: 'GET',
      path: '/api/:id/webhook/deliveries',
      auth: 'instance',
      operationId: 'listDeliveries',
      summary: 'Recent webhook deliveries, newest first: status, attempts, last error',
      tags: ['webhooks'],
      query: DeliveriesQuery,
      response: { description: 'Deliveries.', schema: DeliveriesBody },
      errors: ['INVALID_FIELD'],
      async handle({ instance, query }) {
        const { counts, deliveries } = await deliverer.outbox.list(instance.id, { ...(query.status !== undefined ? { status: query.status } : {}), limit: query.limit ?? 50 });
        return { success: true, instanceId: instance.id, counts, deliveries: deliveries.map(summarise) };
      },
    }),

    defineRoute({
      method: 'POST',
      path: '/api/:id/webhook/deliveries/:deliveryId/redeliver',
      auth: 'instance',
      operationId: 'redeliver',
      summary: 'Queue a finished (usually failed) delivery again, with the same webhook-id',
      tags: ['webhooks'],
      response: { description: 'Queued (or still pending).', schema: RedeliverBody },
      errors: ['NOT_FOUND'],
      async handle({ instance, params, principal }) {
        const result = await audited(audit, principal, 'webhook.redeliver', { instanceId: instance.id, target: params.deliveryId!.slice(0, 100) }, async () => {
          const r = await deliverer.redeliver(instance.id, params.deliveryId!);
          if (r.outcome === 'not-found') throw new GatewayError('NOT_FOUND', `no delivery ${JSON.stringify(params.deliveryId!.slice(0, 60))} for this instance`);
          return r;
        });
        return { success: true, instanceId: instance.id, requeued: result.outcome === 'requeued', delivery: summarise(result.state) };
      },
    }),
  ];
}
