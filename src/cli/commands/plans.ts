import type { Command } from 'commander';
import { systemClock } from '../../domain/clock.js';
import { isPremium, quotaRemaining } from '../../plans/rules.js';
import { openContext, output, parsePositive, requireInstance } from '../context.js';

export function registerPlans(program: Command): void {
  program
    .command('key')
    .description('API keys')
    .command('rotate <id>')
    .description('issue a new API key (shown once); the old one stops working at once, also in a running daemon')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const ctx = await openContext(cmd);
      const { apiKey } = await ctx.instances.rotateKey(id);
      output(ctx.json, { instanceId: id, apiKey }, `New API key for ${id} (shown once, store it now): ${apiKey}`);
    });

  program
    .command('credits')
    .description('credits')
    .command('add')
    .description('add N credits to an instance')
    .argument('<id>', 'instance id')
    .argument('<n>', 'credits to add', parsePositive)
    .action(async (id: string, amount: number, _opts: unknown, cmd: Command) => {
      const ctx = await openContext(cmd);
      const record = requireInstance(ctx, id);
      const doc = await ctx.credits.add(id, amount);
      const quota = quotaRemaining(record, doc.balance, systemClock.now());
      output(ctx.json, { instanceId: id, credits: doc.balance, quotaRemaining: quota }, `${id}: ${doc.balance} credits`);
    });

  program
    .command('premium')
    .description('premium')
    .command('grant <id>')
    .description('extend premium by N days (from now, or from the current end if still premium)')
    .requiredOption('--days <n>', 'days of premium', parsePositive)
    .action(async (id: string, opts: { days: number }, cmd: Command) => {
      const ctx = await openContext(cmd);
      const record = await ctx.instances.grantPremium(id, opts.days);
      const premium = isPremium(record, systemClock.now());
      output(ctx.json, { instanceId: id, premium, premiumUntil: record.premiumUntil }, `${id}: premium until ${record.premiumUntil}`);
    });
}
