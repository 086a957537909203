import type { Command } from 'commander';
import { UserError, errorMessage } from '../../domain/errors.js';
import { WEBHOOK_EVENTS, type WebhookEventType } from '../../domain/types.js';
import { checkWebhookUrl } from '../../webhooks/target-policy.js';
import { openContext, output } from '../context.js';

interface SetOptions {
  url: string;
  secret?: string;
  events?: string;
}

/** `gateway webhook ...`; deliveries/redeliver hang off the returned command. */
export function registerWebhook(program: Command): Command {
  const webhook = program.command('webhook').description('webhook settings and deliveries');
  webhook
    .command('set <id>')
    .description('set where events are delivered and the secret that signs them')
    .requiredOption('--url <url>', 'receiver URL (http or https)')
    .option('--secret <secret>', 'signing secret (whsec_<base64> for Standard Webhooks clients)')
    .option('--events <list>', `comma-separated event types (default all: ${WEBHOOK_EVENTS.join(',')})`)
    .action(async (id: string, opts: SetOptions, cmd: Command) => {
      const ctx = await openContext(cmd);
      try {
        await checkWebhookUrl(opts.url, ctx.config.webhooks.allowPrivateTargets);
      } catch (err) {
        throw new UserError(`--url: ${errorMessage(err)}`, 2);
      }
      let events: WebhookEventType[] | null = null;
      if (opts.events !== undefined) {
        const list = opts.events.split(',').map((s) => s.trim()).filter(Boolean);
        const bad = list.find((e) => !(WEBHOOK_EVENTS as readonly string[]).includes(e));
        if (bad !== undefined || list.length === 0) throw new UserError(`--events: unknown event ${JSON.stringify(bad ?? '')}; use ${WEBHOOK_EVENTS.join(', ')}`, 2);
        events = [...new Set(list as WebhookEventType[])];
      }
      await ctx.instances.setWebhook(id, { url: opts.url, secret: opts.secret || null, events });
      output(ctx.json, { instanceId: id, url: opts.url, signed: Boolean(opts.secret), events: events ?? 'all' }, `Webhook for ${id}: ${opts.url}${opts.secret ? ' (signed)' : ' (unsigned)'}`);
    });
  return webhook;
}
