import type Router from '@koa/router';
import type { Context, Next } from 'koa';
import { GatewayError } from '../../domain/errors.js';
import { WEBHOOK_EVENTS, type WebhookEventType, type WebhookSettings } from '../../domain/types.js';
import type { InstanceState } from '../auth.js';
import { bodyObject, jsonBody, optionalString, requiredString } from '../body.js';
import type { AppDeps } from '../deps.js';

type Auth = (ctx: Context, next: Next) => Promise<void>;

/** Validates a webhook from API input, including the SSRF policy; `field` names the URL field. */
export async function parseWebhookInput(
  deps: AppDeps,
  input: { url: string; secret: string | undefined; events: unknown },
  field = 'url',
): Promise<WebhookSettings> {
  try {
    await deps.checkWebhookTarget(input.url);
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    throw new GatewayError('INVALID_FIELD', `${field}: ${err instanceof Error ? err.message : String(err)}`);
  }
  let events: WebhookEventType[] | null = null;
  if (input.events !== undefined && input.events !== null) {
    if (!Array.isArray(input.events) || !input.events.every((e) => (WEBHOOK_EVENTS as readonly unknown[]).includes(e))) {
      throw new GatewayError('INVALID_FIELD', `events must be an array of ${WEBHOOK_EVENTS.join(', ')}`);
    }
    events = [...new Set(input.events as WebhookEventType[])];
  }
  return { url: input.url, secret: input.secret && input.secret.length > 0 ? input.secret : null, events };
}

export function webhookRoutes(router: Router, deps: AppDeps, auth: Auth): void {
  router.put('/api/:id/webhook', auth, jsonBody, async (ctx) => {
    const { instance } = ctx.state as InstanceState;
    const body = bodyObject(ctx);
    const url = requiredString(body, 'url', 2048);
    const secret = optionalString(body, 'secret', 512);
    const webhook = await parseWebhookInput(deps, { url, secret, events: body.events });
    await deps.instances.setWebhook(instance.id, webhook);
    await deps.reload();
    ctx.body = { success: true, instanceId: instance.id, webhook: { url: webhook.url, signed: webhook.secret !== null, events: webhook.events ?? 'all' } };
  });
}
