import type { Command } from 'commander';
import { rm } from 'node:fs/promises';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { systemClock } from '../../domain/clock.js';
import { UserError, errorMessage } from '../../domain/errors.js';
import type { InstanceRecord } from '../../domain/types.js';
import { isPremium, quotaRemaining } from '../../plans/rules.js';
import { provisionInstance } from '../../store/provision.js';
import { storePaths } from '../../store/paths.js';
import { checkWebhookUrl } from '../../webhooks/target-policy.js';
import { runningDaemon } from '../../daemon/daemon-lock.js';
import { logoutStandalone } from '../standalone-logout.js';
import { openContext, output, parseCount, parsePositive, requireInstance, type CliContext } from '../context.js';

interface CreateOptions {
  name?: string;
  owner?: string;
  sandbox?: boolean;
  webhookUrl?: string;
  webhookSecret?: string;
  credits?: number;
  premiumDays?: number;
}

async function describe(ctx: CliContext, r: InstanceRecord) {
  const now = systemClock.now();
  const balance = (await ctx.credits.read(r.id)).balance;
  return {
    instanceId: r.id,
    name: r.name,
    owner: r.owner,
    sandbox: r.sandbox,
    createdAt: r.createdAt,
    premium: isPremium(r, now),
    premiumUntil: r.premiumUntil,
    credits: balance,
    quotaRemaining: quotaRemaining(r, balance, now),
    webhook: r.webhook ? { url: r.webhook.url, signed: r.webhook.secret !== null, events: r.webhook.events ?? 'all' } : null,
  };
}

/** Removes what an instance leaves in the data dir besides its record. */
export async function removeInstanceFiles(dataDir: string, id: string): Promise<void> {
  const paths = storePaths(dataDir);
  await rm(paths.credits(id), { force: true });
  await rm(join(paths.outboxDir, id), { recursive: true, force: true });
  await rm(join(paths.flowsDir, id), { recursive: true, force: true });
  const auth = await readdir(paths.authDir).catch(() => [] as string[]);
  for (const name of auth) {
    if (name === id || name.startsWith(`${id}.`)) await rm(join(paths.authDir, name), { recursive: true, force: true });
  }
}

export function registerInstance(program: Command): void {
  const instance = program.command('instance').description('create, list, show and delete instances');

  instance
    .command('create')
    .description('create an instance; prints its id and API key (the key is shown once)')
    .option('--name <name>', 'a label for people')
    .option('--owner <owner>', 'the customer it belongs to (the first instance of an owner gets the trial)')
    .option('--sandbox', 'a simulated connection for tests and integration work')
    .option('--webhook-url <url>', 'where message.received and other events are POSTed')
    .option('--webhook-secret <secret>', 'signs deliveries (use whsec_<base64> for Standard Webhooks clients)')
    .option('--credits <n>', 'starting credits', parseCount)
    .option('--premium-days <n>', 'premium days on top of any trial', parseCount)
    .action(async (opts: CreateOptions, cmd: Command) => {
      const ctx = await openContext(cmd);
      if (opts.webhookSecret !== undefined && opts.webhookUrl === undefined) throw new UserError('--webhook-secret needs --webhook-url', 2);
      if (opts.webhookUrl !== undefined) {
        try {
          await checkWebhookUrl(opts.webhookUrl, ctx.config.webhooks.allowPrivateTargets);
        } catch (err) {
          throw new UserError(`--webhook-url: ${errorMessage(err)}`, 2);
        }
      }
      const created = await provisionInstance(
        ctx.instances,
        ctx.credits,
        {
          ...(opts.name !== undefined ? { name: opts.name } : {}),
          ...(opts.owner !== undefined ? { owner: opts.owner } : {}),
          sandbox: opts.sandbox ?? false,
          webhook: opts.webhookUrl ? { url: opts.webhookUrl, secret: opts.webhookSecret ?? null, events: null } : null,
          ...(opts.premiumDays !== undefined ? { premiumDays: opts.premiumDays } : {}),
        },
        (opts.credits ?? 0) + ctx.config.plans.initialCredits,
      );
      const view = await describe(ctx, created.record);
      output(
        ctx.json,
        { ...view, instanceId: created.record.id, apiKey: created.apiKey },
        [
          `Created instance ${created.record.id}${created.record.sandbox ? ' (sandbox)' : ''}`,
          `API key (X-API-Key, shown once, store it now): ${created.apiKey}`,
          `Premium: ${view.premium ? `until ${view.premiumUntil}` : 'no'}; quota: ${view.quotaRemaining}`,
        ].join('\n'),
      );
    });

  instance
    .command('list')
    .description('list instances')
    .action(async (_opts: unknown, cmd: Command) => {
      const ctx = await openContext(cmd);
      const views = await Promise.all(ctx.instances.list().map((r) => describe(ctx, r)));
      const lines = views.map((v) => `${v.instanceId}  ${v.sandbox ? 'sandbox ' : 'whatsapp'}  quota ${v.quotaRemaining.padEnd(9)}  ${v.owner}  ${v.name}`);
      output(ctx.json, { instances: views }, lines.length ? lines.join('\n') : 'no instances');
    });

  instance
    .command('show <id>')
    .description('show one instance')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const ctx = await openContext(cmd);
      const view = await describe(ctx, requireInstance(ctx, id));
      output(ctx.json, view, Object.entries(view).map(([k, v]) => `${k}: ${typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)}`).join('\n'));
    });

  instance
    .command('delete <id>')
    .description('delete an instance: logs its device out and removes its credentials, credits and deliveries')
    .option('--logout-timeout <s>', 'with no daemon running: seconds to wait for WhatsApp to log the device out', parsePositive, 10)
    .action(async (id: string, opts: { logoutTimeout: number }, cmd: Command) => {
      const ctx = await openContext(cmd);
      const record = requireInstance(ctx, id);
      // A running daemon notices the removal and logs the device out itself; without one, do it here.
      const daemon = await runningDaemon(ctx.dataDir);
      const logout = daemon ? 'daemon-running' : await logoutStandalone(ctx, record, opts.logoutTimeout * 1000);
      await ctx.instances.remove(id);
      await removeInstanceFiles(ctx.dataDir, id);
      if (logout === 'unreachable') {
        process.stderr.write(`gateway: could not reach WhatsApp to log ${id}'s device out; its credentials are deleted, remove the device on the phone (Linked devices)\n`);
      }
      output(ctx.json, { instanceId: id, deleted: true, loggedOut: logout === 'logged-out' || logout === 'daemon-running' }, `Deleted instance ${id}`);
    });
}
