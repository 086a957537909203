import { Command, CommanderError } from 'commander';
import { UserError, errorMessage } from '../domain/errors.js';
import { registerInit } from './commands/init.js';
import { registerInstance } from './commands/instance.js';
import { registerPlans } from './commands/plans.js';
import { registerStart } from './commands/start.js';
import { registerWebhook } from './commands/webhook.js';
import { registerPair } from './commands/pair.js';
import { registerFlow } from './commands/flow.js';
import { registerHandover } from './commands/handover.js';
import { registerDoctor } from './commands/doctor.js';

/** Exit codes: 0 ok, 1 failure, 2 bad usage or config, 3 store unusable, 4 no such instance. */
function fail(err: unknown): never {
  if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : 2);
  const message = errorMessage(err).split('\n')[0] ?? 'failed';
  process.stderr.write(`gateway: ${message}\n`);
  process.exit(err instanceof UserError ? err.exitCode : 1);
}

// Everything the gateway creates (store files, lock dirs, sockets, uploads) is private to its user.
process.umask(0o077);

const program = new Command('gateway')
  .description('Self-hosted WhatsApp messaging gateway')
  .option('--data-dir <dir>', 'data directory (env GATEWAY_DATA_DIR, default ./data)')
  .option('--json', 'print one JSON document for scripts')
  .showHelpAfterError()
  .exitOverride();

registerInit(program);
registerStart(program);
registerInstance(program);
registerPlans(program);
registerWebhook(program);
registerPair(program);
registerFlow(program);
registerHandover(program);
registerDoctor(program);

program.parseAsync(process.argv).catch(fail);
