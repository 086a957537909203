import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { GatewayError, errorMessage } from '../domain/errors.js';
import { registerDoctor } from './commands/doctor.js';
import { registerFlow } from './commands/flow.js';
import { registerHandover } from './commands/handover.js';
import { registerInit } from './commands/init.js';
import { registerInstance } from './commands/instance.js';
import { registerPair } from './commands/pair.js';
import { registerPlans } from './commands/plans.js';
import { registerOperator } from './commands/operator.js';
import { registerStart } from './commands/start.js';
import { registerStorage } from './commands/storage.js';
import { registerWebhook } from './commands/webhook.js';

function version(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

const wantsJson = process.argv.includes('--json');

/**
 * Exit codes come from the one error table: 0 ok, 1 failure, 2 bad usage or config, 3 store
 * unusable, 4 no such instance (or delivery). The reason is one line on stderr; with --json the
 * error document is printed on stdout too.
 */
function fail(err: unknown): never {
  if (err instanceof CommanderError) {
    if (err.exitCode === 0) process.exit(0);
    if (wantsJson) process.stdout.write(`${JSON.stringify({ success: false, error: { code: 'USAGE', message: err.message.replace(/^error: /, '') } })}\n`);
    process.exit(2);
  }
  const known = err instanceof GatewayError ? err : null;
  const message = errorMessage(err).split('\n')[0] ?? 'failed';
  process.stderr.write(`gateway: ${message}\n`);
  if (wantsJson) process.stdout.write(`${JSON.stringify({ success: false, error: { code: known?.code ?? 'INTERNAL', message } })}\n`);
  process.exit(known ? known.exitCode : 1);
}

// Everything the gateway creates (store files, lock dirs, sockets, uploads) is private to its user.
process.umask(0o077);

/** commander's `error: X\n(Did you mean Y?)` as the one line every other failure is: `gateway: X (did you mean Y?)`. */
function oneLine(text: string): string {
  const flat = text
    .trim()
    .replace(/\n\(Did you mean (.+?)\)$/, ' (did you mean $1)')
    .replace(/^error: /, '');
  return `gateway: ${flat.split('\n')[0] ?? flat}\n`;
}

const program = new Command('gateway')
  .description('Self-hosted WhatsApp messaging gateway')
  .version(version(), '-V, --version', 'print the version')
  .option('--data-dir <dir>', 'data directory (env GATEWAY_DATA_DIR, default ./data)')
  .option('--json', 'print one JSON document for scripts')
  // Inherited by every command registered below: --data-dir and --json in each one's help.
  .configureHelp({ showGlobalOptions: true })
  .configureOutput({ outputError: (text, write) => write(oneLine(text)) })
  .exitOverride();

registerInit(program);
registerStart(program);
registerInstance(program);
registerPlans(program);
registerWebhook(program);
registerPair(program);
registerFlow(program);
registerHandover(program);
registerOperator(program);
registerDoctor(program);
registerStorage(program);

/** A usage error is one line and where to read more, not the whole help (30 lines) burying it. */
function hintAfterErrors(cmd: Command, path: string): void {
  cmd.showHelpAfterError(`run \`${path} --help\` for usage`);
  for (const sub of cmd.commands) hintAfterErrors(sub, `${path} ${sub.name()}`);
}
hintAfterErrors(program, 'gateway');

program.parseAsync(process.argv).catch(fail);
