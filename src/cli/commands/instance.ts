import type { Command } from 'commander';
import { GatewayError } from '../../domain/errors.js';
import { seg, withApi } from '../api.js';
import { confirmOnTerminal } from '../confirm.js';
import { globals, output, parseCount, parsePositive } from '../context.js';

interface CreateOptions {
  name?: string;
  owner?: string;
  sandbox?: boolean;
  webhookUrl?: string;
  webhookSecret?: string;
  credits?: number;
  premiumDays?: number;
}

type View = Record<string, unknown> & { instanceId: string; sandbox: boolean; quotaRemaining: string; owner: string; name: string; status: string };

function describe(view: Record<string, unknown>): string {
  return Object.entries(view)
    .filter(([k]) => k !== 'success' && k !== 'apiKey')
    .map(([k, v]) => `${k}: ${typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)}`)
    .join('\n');
}

function strip(body: Record<string, unknown>): Record<string, unknown> {
  const { success: _s, ...rest } = body;
  return rest;
}

export function registerInstance(program: Command): void {
  const instance = program.command('instance').description('create, list, show, log out, restart and delete instances');

  instance
    .command('create')
    .description('create an instance; prints its id and API key (the key is shown once)')
    .option('--name <name>', 'a label for people')
    .option('--owner <owner>', 'the customer it belongs to (the first instance of an owner gets the trial)')
    .option('--sandbox', 'a simulated connection for tests and integration work')
    .option('--webhook-url <url>', 'where message.received and other events are POSTed')
    .option('--webhook-secret <secret>', 'signs deliveries (whsec_<base64 of 24+ bytes> for Standard Webhooks clients)')
    .option('--credits <n>', 'starting credits', parseCount)
    .option('--premium-days <n>', 'premium days on top of any trial', parseCount)
    .action(async (opts: CreateOptions, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      if (opts.webhookSecret !== undefined && opts.webhookUrl === undefined) throw new GatewayError('USAGE', '--webhook-secret needs --webhook-url');
      const body = {
        ...(opts.name !== undefined ? { name: opts.name } : {}),
        ...(opts.owner !== undefined ? { owner: opts.owner } : {}),
        sandbox: opts.sandbox ?? false,
        ...(opts.webhookUrl !== undefined ? { webhookUrl: opts.webhookUrl } : {}),
        ...(opts.webhookSecret !== undefined ? { webhookSecret: opts.webhookSecret } : {}),
        ...(opts.credits !== undefined ? { credits: opts.credits } : {}),
        ...(opts.premiumDays !== undefined ? { premiumDays: opts.premiumDays } : {}),
      };
      const created = (await withApi(dataDir, (api) => api.call('POST', '/api/instances/create', body))) as View;
      const lines = [
        `Created instance ${created.instanceId}${created.sandbox ? ' (sandbox)' : ''}`,
        `API key (X-API-Key, shown once, store it now): ${String(created.apiKey)}`,
        `Premium: ${created.premium ? `until ${String(created.premiumUntil)}` : 'no'}; quota: ${created.quotaRemaining}`,
      ];
      if (!created.premium && created.quotaRemaining === '0') {
        lines.push(`It has no credits: sends answer 403 QUOTA_EXHAUSTED until you run \`gateway credits add ${created.instanceId} N\` or \`gateway premium grant ${created.instanceId} --days N\`.`);
      }
      output(json, strip(created), lines.join('\n'));
    });

  instance
    .command('list')
    .description('list instances, oldest first')
    .option('--owner <owner>', 'only the instances of this owner')
    .action(async (opts: { owner?: string }, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      const views = await withApi(dataDir, async (api) => {
        const all: View[] = [];
        let cursor: string | null = null;
        do {
          const q = new URLSearchParams({ limit: '500', ...(opts.owner ? { owner: opts.owner } : {}), ...(cursor ? { cursor } : {}) });
          const page = await api.call('GET', `/api/instances?${q.toString()}`);
          all.push(...(page.instances as View[]));
          cursor = page.nextCursor as string | null;
        } while (cursor);
        return all;
      });
      const lines = views.map((v) => `${v.instanceId}  ${v.sandbox ? 'sandbox ' : 'whatsapp'}  ${v.status.padEnd(17)}  quota ${v.quotaRemaining.padEnd(9)}  ${v.owner}  ${v.name}`);
      output(json, { instances: views }, lines.length ? lines.join('\n') : 'no instances');
    });

  instance
    .command('show <id>')
    .description('show one instance')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      const view = await withApi(dataDir, (api) => api.call('GET', `/api/instances/${seg(id)}`));
      output(json, strip(view), describe(view));
    });

  instance
    .command('delete <id>')
    .description('delete an instance: logs its device out and removes its credentials, credits, deliveries, flows and history')
    .option('--logout-timeout <s>', 'with no daemon running: seconds to wait for WhatsApp to log the device out', parsePositive, 10)
    .option('-y, --yes', 'delete without asking (needed when not on a terminal)')
    .action(async (id: string, opts: { logoutTimeout: number; yes?: boolean }, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      if (!opts.yes) {
        await confirmOnTerminal(
          `Delete ${id}? Its device is logged out, and its credentials, credits, messages, media, deliveries and flow state are removed for good.`,
          `instance delete ${id}: not asked on a terminal, so nothing was deleted; pass --yes to delete without asking`,
        );
      }
      const result = await withApi(dataDir, (api) => api.call('DELETE', `/api/instances/${seg(id)}`), { logoutTimeoutMs: opts.logoutTimeout * 1000 });
      if (result.logout === 'unreachable' || result.logout === 'failed') {
        process.stderr.write(`gateway: could not reach WhatsApp to log ${id}'s device out; its credentials are deleted, remove the device on the phone (Linked devices)\n`);
      }
      output(json, { ...strip(result), loggedOut: result.logout === 'logged-out' }, `Deleted instance ${id}`);
    });

  instance
    .command('logout <id>')
    .description('unlink the WhatsApp device; the instance stays and shows a new QR (with a daemon)')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      const result = await withApi(dataDir, (api) => api.call('POST', `/api/${seg(id)}/logout`));
      output(json, strip(result), `Logged ${id} out (status: ${String(result.status)})`);
    });

  instance
    .command('restart <id>')
    .description("reconnect an instance now (also after its connection gave up); needs the daemon")
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      const result = await withApi(dataDir, (api) => api.call('POST', `/api/${seg(id)}/restart`));
      output(json, strip(result), `Restarting ${id} (status: ${String(result.status)})`);
    });
}
