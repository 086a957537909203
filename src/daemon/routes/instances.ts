import type Router from '@koa/router';
import type { Context, Next } from 'koa';
import { GatewayError } from '../../domain/errors.js';
import { provisionInstance } from '../../store/provision.js';
import { MAX_CREDITS } from '../../store/credits.js';
import { bodyObject, jsonBody, optionalBoolean, optionalCount, optionalString } from '../body.js';
import type { AppDeps } from '../deps.js';
import { instanceView } from './status.js';
import { parseWebhookInput } from './webhook.js';

type Auth = (ctx: Context, next: Next) => Promise<void>;

/** External provisioning with the server secret. */
export function instanceRoutes(router: Router, deps: AppDeps, secretAuth: Auth): void {
  router.post('/api/instances/create', secretAuth, jsonBody, async (ctx) => {
    const body = bodyObject(ctx);
    const name = optionalString(body, 'name', 100);
    const owner = optionalString(body, 'owner', 100);
    const sandbox = optionalBoolean(body, 'sandbox');
    const credits = optionalCount(body, 'credits', MAX_CREDITS);
    const webhookUrl = optionalString(body, 'webhookUrl', 2048);
    const webhookSecret = optionalString(body, 'webhookSecret', 512);
    if (webhookSecret !== undefined && webhookUrl === undefined) {
      throw new GatewayError('MISSING_FIELD', 'webhookUrl is required when webhookSecret is given');
    }
    const webhook = webhookUrl === undefined ? null : await parseWebhookInput(deps, { url: webhookUrl, secret: webhookSecret, events: undefined }, 'webhookUrl');

    const created = await provisionInstance(
      deps.instances,
      deps.credits,
      {
        ...(name !== undefined ? { name } : {}),
        ...(owner !== undefined ? { owner } : {}),
        ...(sandbox !== undefined ? { sandbox } : {}),
        webhook,
      },
      (credits ?? 0) + deps.config.plans.initialCredits,
    );
    await deps.reload();
    const view = await instanceView(deps, created.record);
    ctx.status = 201;
    ctx.body = {
      success: true,
      instanceId: created.record.id,
      apiKey: created.apiKey,
      status: view.status,
      premium: view.premium,
      premiumUntil: view.premiumUntil,
      quotaRemaining: view.quotaRemaining,
    };
  });
}
