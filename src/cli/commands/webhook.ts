import type { Command } from 'commander';
import { UserError, errorMessage } from '../../domain/errors.js';
import { WEBHOOK_EVENTS, type WebhookEventType } from '../../domain/types.js';
import { summarise, type DeliverySummary } from '../../webhooks/delivery-record.js';
import { outboxPaths, readInstanceDeliveries, requeueDelivery } from '../../webhooks/outbox-files.js';
import { checkWebhookUrl } from '../../webhooks/target-policy.js';
import { openContext, output, parsePositive, requireInstance } from '../context.js';

interface DeliveriesOptions {
  failed?: boolean;
  limit: number;
}

function describeDelivery(d: DeliverySummary): string {
  const when = d.status === 'delivered' ? `delivered ${d.deliveredAt}` : d.status === 'pending' ? `next attempt ${d.nextAttemptAt}` : `failed ${d.finishedAt}`;
  const error = d.lastError ? `  last error: ${d.lastError}` : '';
  return `${d.id}  ${d.status.padEnd(9)}  ${d.type.padEnd(21)}  attempts ${d.attempts}  created ${d.createdAt}  ${when}${error}`;
}

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

  webhook
    .command('deliveries <id>')
    .description('recent deliveries of an instance, newest first: status, attempts, last error')
    .option('--failed', 'only deliveries that failed after their last attempt')
    .option('--limit <n>', 'at most this many (default 50)', parsePositive, 50)
    .action(async (id: string, opts: DeliveriesOptions, cmd: Command) => {
      const ctx = await openContext(cmd);
      requireInstance(ctx, id);
      const all = (await readInstanceDeliveries(outboxPaths(ctx.dataDir), id)).map(summarise);
      const counts = { pending: 0, delivered: 0, failed: 0 };
      for (const d of all) counts[d.status] += 1;
      const newestFirst = all.sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id));
      const shown = newestFirst.filter((d) => !opts.failed || d.status === 'failed').slice(0, opts.limit);
      const human = shown.length > 0 ? shown.map(describeDelivery).join('\n') : opts.failed ? 'no failed deliveries' : 'no deliveries';
      output(ctx.json, { instanceId: id, counts, deliveries: shown }, human);
    });

  webhook
    .command('redeliver <id> <delivery>')
    .description('queue a finished (usually failed) delivery again, with the same webhook-id')
    .action(async (id: string, deliveryId: string, _opts: unknown, cmd: Command) => {
      const ctx = await openContext(cmd);
      requireInstance(ctx, id);
      const result = await requeueDelivery(ctx.dataDir, id, deliveryId, Date.now());
      if (result.outcome === 'not-found') throw new UserError(`no delivery ${JSON.stringify(deliveryId)} for instance ${id} (see gateway webhook deliveries ${id})`, 4);
      const view = summarise(result.record);
      const requeued = result.outcome === 'requeued';
      output(
        ctx.json,
        { instanceId: id, requeued, delivery: view },
        requeued ? `Re-queued ${deliveryId} (webhook-id unchanged); a running daemon sends it within a second, otherwise at its next start` : `${deliveryId} is still pending (attempt ${view.attempts}, next ${view.nextAttemptAt}); nothing to do`,
      );
    });
  return webhook;
}
