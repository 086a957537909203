import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { GatewayError } from '../../domain/errors.js';
import { EVENT_TYPES } from '../../domain/types.js';
import { seg, withApi } from '../api.js';
import { globals, output, parsePositive } from '../context.js';

interface DeliveryView {
  id: string;
  type: string;
  status: string;
  attempts: number;
  createdAt: string;
  deliveredAt: string | null;
  nextAttemptAt: string | null;
  finishedAt: string | null;
  lastError: string | null;
}

function describeDelivery(d: DeliveryView): string {
  const when = d.status === 'delivered' ? `delivered ${d.deliveredAt}` : d.status === 'pending' ? `next attempt ${d.nextAttemptAt}` : `failed ${d.finishedAt}`;
  const error = d.lastError ? `  last error: ${d.lastError}` : '';
  return `${d.id}  ${d.status.padEnd(9)}  ${d.type.padEnd(21)}  attempts ${d.attempts}  created ${d.createdAt}  ${when}${error}`;
}

/**
 * A new Standard Webhooks secret: `whsec_` and the base64 of 32 random bytes (the spec asks for
 * 24 to 64), so nobody has to invent one, or copy the one from an example.
 */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

interface SetOptions {
  url?: string;
  secret?: string;
  events?: string;
  unsigned?: boolean;
}

/** `gateway webhook set|show|test|deliveries|redeliver` (the same routes as the API). */
export function registerWebhook(program: Command): Command {
  const webhook = program.command('webhook').description('webhook settings and deliveries');
  webhook
    .command('set <id>')
    .description('set where events are delivered, the secret that signs them and which events; options left out keep their value')
    .option('--url <url>', 'receiver URL (http or https)')
    .option('--secret <secret>', 'signing secret (whsec_<base64 of 24+ bytes> for Standard Webhooks clients), or "generate": a new whsec_ secret, printed once')
    .option('--unsigned', 'remove the secret: deliveries are no longer signed')
    .option('--events <list>', `comma-separated event types, or "all" (${EVENT_TYPES.join(',')})`)
    .action(async (id: string, opts: SetOptions, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      if (opts.secret !== undefined && opts.unsigned) throw new GatewayError('USAGE', '--secret and --unsigned exclude each other');
      let events: string[] | null | undefined;
      if (opts.events !== undefined) {
        const list = opts.events.split(',').map((s) => s.trim()).filter(Boolean);
        events = list.length === 1 && list[0] === 'all' ? null : list;
        const bad = (events ?? []).find((e) => !(EVENT_TYPES as readonly string[]).includes(e));
        if (bad !== undefined || (events !== null && events.length === 0)) throw new GatewayError('USAGE', `--events: unknown event ${JSON.stringify(bad ?? '')}; use ${EVENT_TYPES.join(', ')} or all`);
      }
      const generated = opts.secret === 'generate' ? generateWebhookSecret() : null;
      const secret = generated ?? opts.secret;
      const body = {
        ...(opts.url !== undefined ? { url: opts.url } : {}),
        ...(secret !== undefined ? { secret } : opts.unsigned ? { secret: null } : {}),
        ...(events !== undefined ? { events } : {}),
      };
      const result = await withApi(dataDir, (api) => api.call('PUT', `/api/${seg(id)}/webhook`, body));
      const w = result.webhook as { url: string; signed: boolean; events: string[] | 'all' };
      const lines = [`Webhook for ${id}: ${w.url} (${w.signed ? 'signed' : 'unsigned'}; events: ${Array.isArray(w.events) ? w.events.join(',') : w.events})`];
      // Stored in the instance (it signs every delivery) but never shown again: the receiver needs it now.
      if (generated) lines.push(`Signing secret (shown once, give it to the receiver): ${generated}`);
      output(json, { instanceId: id, ...w, ...(generated ? { secret: generated } : {}) }, lines.join('\n'));
    });

  webhook
    .command('show <id>')
    .description('the webhook as stored: URL, signed or not, events (never the secret)')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      const result = await withApi(dataDir, (api) => api.call('GET', `/api/${seg(id)}/webhook`));
      const w = result.webhook as { url: string; signed: boolean; events: string[] | 'all' } | null;
      output(json, { instanceId: id, webhook: w }, w ? `Webhook for ${id}: ${w.url} (${w.signed ? 'signed' : 'unsigned'}; events: ${Array.isArray(w.events) ? w.events.join(',') : w.events})` : `${id} has no webhook`);
    });

  webhook
    .command('test <id>')
    .description('queue a webhook.test event to the webhook (whatever its events filter); follow it with `webhook deliveries`')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      const result = await withApi(dataDir, (api) => api.call('POST', `/api/${seg(id)}/webhook/test`));
      const view = result.delivery as DeliveryView;
      output(json, { instanceId: id, delivery: view }, `Queued test delivery ${view.id}: sent at once by a running daemon, otherwise at its next start (see \`gateway webhook deliveries ${id}\`)`);
    });

  webhook
    .command('deliveries <id>')
    .description('recent deliveries of an instance, newest first: status, attempts, last error')
    .option('--failed', 'only deliveries that failed after their last attempt')
    .option('--limit <n>', 'at most this many (default 50, at most 500)', parsePositive, 50)
    .action(async (id: string, opts: { failed?: boolean; limit: number }, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      const q = new URLSearchParams({ limit: String(Math.min(opts.limit, 500)), ...(opts.failed ? { status: 'failed' } : {}) });
      const result = await withApi(dataDir, (api) => api.call('GET', `/api/${seg(id)}/webhook/deliveries?${q.toString()}`));
      const shown = result.deliveries as DeliveryView[];
      const human = shown.length > 0 ? shown.map(describeDelivery).join('\n') : opts.failed ? 'no failed deliveries' : 'no deliveries';
      output(json, { instanceId: id, counts: result.counts, deliveries: shown }, human);
    });

  webhook
    .command('redeliver <id> <delivery>')
    .description('queue a finished (usually failed) delivery again, with the same webhook-id')
    .action(async (id: string, deliveryId: string, _opts: unknown, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      const result = await withApi(dataDir, (api) => api.call('POST', `/api/${seg(id)}/webhook/deliveries/${seg(deliveryId)}/redeliver`));
      const view = result.delivery as DeliveryView;
      const requeued = result.requeued === true;
      output(
        json,
        { instanceId: id, requeued, delivery: view },
        requeued ? `Re-queued ${deliveryId} (webhook-id unchanged); a running daemon sends it at once, otherwise at its next start` : `${deliveryId} is still pending (attempt ${view.attempts}, next ${view.nextAttemptAt}); nothing to do`,
      );
    });
  return webhook;
}
