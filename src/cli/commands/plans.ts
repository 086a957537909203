import type { Command } from 'commander';
import { seg, withApi } from '../api.js';
import { globals, output, outputFlushed, parseDays, parsePositive } from '../context.js';
import { MAX_PREMIUM_DAYS } from '../../domain/limits.js';

export function registerPlans(program: Command): void {
  program
    .command('key')
    .description('API keys')
    .command('rotate <id>')
    .description('issue a new API key (shown once); the old one stops working at once, also in a running daemon')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      await withApi(dataDir, async (api) => {
        const result = await api.call('POST', `/api/instances/${seg(id)}/rotate-key`);
        await outputFlushed(json, { instanceId: id, apiKey: result.apiKey }, `New API key for ${id} (shown once, store it now): ${String(result.apiKey)}`);
        // Shown: only now does the old key stop (a kill before this leaves both working).
        await api.call('POST', `/control/instances/${seg(id)}/key-shown`, { apiKey: result.apiKey });
      });
    });

  const credits = program.command('credits').description('credits');
  credits
    .command('refund')
    .description('take N unspent credits back (409 INSUFFICIENT_CREDITS when fewer are free)')
    .argument('<id>', 'instance id')
    .argument('<n>', 'credits to take back', parsePositive)
    .action(async (id: string, amount: number, _opts: unknown, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      const view = await withApi(dataDir, (api) => api.call('POST', `/api/instances/${seg(id)}/credits`, { add: -amount }));
      output(json, { instanceId: id, credits: view.credits, quotaRemaining: view.quotaRemaining }, `${id}: ${String(view.credits)} credits`);
    });
  credits
    .command('add')
    .description('add N credits to an instance')
    .argument('<id>', 'instance id')
    .argument('<n>', 'credits to add', parsePositive)
    .action(async (id: string, amount: number, _opts: unknown, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      const view = await withApi(dataDir, (api) => api.call('POST', `/api/instances/${seg(id)}/credits`, { add: amount }));
      output(json, { instanceId: id, credits: view.credits, quotaRemaining: view.quotaRemaining }, `${id}: ${String(view.credits)} credits`);
    });

  program
    .command('premium')
    .description('premium')
    .command('grant <id>')
    .description('extend premium by N days (from now, or from the current end if still premium)')
    .requiredOption('--days <n>', `days of premium (1 to ${MAX_PREMIUM_DAYS})`, parseDays)
    .action(async (id: string, opts: { days: number }, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      const view = await withApi(dataDir, (api) => api.call('POST', `/api/instances/${seg(id)}/premium`, { days: opts.days }));
      output(json, { instanceId: id, premium: view.premium, premiumUntil: view.premiumUntil }, `${id}: premium until ${String(view.premiumUntil)}`);
    });
}
