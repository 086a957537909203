import type { Command } from 'commander';
import { assertNotInitialised, initialiseDataDir, type InitAnswers } from '../../daemon/init.js';
import { globals, output, parsePort } from '../context.js';

interface InitOptions {
  yes?: boolean;
  force?: boolean;
  host?: string;
  port?: number;
  allowPrivateWebhooks?: boolean;
}

/** Prompts only on a terminal; scripts, pipes and CI get the defaults and flags. */
function interactive(): boolean {
  return Boolean(process.stdin.isTTY && process.stdout.isTTY);
}

export function registerInit(program: Command): void {
  program
    .command('init')
    .description('first-time set-up of the data dir: host, port, webhook policy and a new server secret (shown once)')
    .option('-y, --yes', 'take defaults and flags without asking')
    .option('--force', 're-initialise an initialised data dir (replaces the server secret; instances are kept)')
    .option('--host <host>', 'address to listen on (default 127.0.0.1)')
    .option('--port <port>', 'port to listen on (default 8080)', parsePort)
    .option('--allow-private-webhooks', 'allow webhook URLs on loopback/private addresses')
    .action(async (opts: InitOptions, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      assertNotInitialised(dataDir, opts.force ?? false);
      const answers: InitAnswers = {};
      if (opts.host !== undefined) answers.host = opts.host;
      if (opts.port !== undefined) answers.port = opts.port;
      if (opts.allowPrivateWebhooks) answers.allowPrivateTargets = true;
      if (!opts.yes && interactive()) {
        const { confirm, input } = await import('@inquirer/prompts');
        answers.host ??= await input({ message: 'Address to listen on', default: '127.0.0.1' });
        answers.port ??= Number(
          await input({
            message: 'Port',
            default: '8080',
            validate: (v) => (/^\d+$/.test(v) && Number(v) <= 65535 ? true : 'a port from 0 to 65535'),
          }),
        );
        answers.allowPrivateTargets ??= await confirm({
          message: 'Allow webhooks to loopback/private addresses (only for receivers on this host or LAN)?',
          default: false,
        });
      }
      const { config, serverSecret } = await initialiseDataDir(dataDir, answers, opts.force ?? false);
      output(
        json,
        { serverSecret, host: config.host, port: config.port, dataDir },
        [
          `Initialised ${dataDir}`,
          `Listening address: ${config.host}:${config.port}`,
          '',
          `Server secret (X-API-Secret, shown once, store it now): ${serverSecret}`,
        ].join('\n'),
      );
    });
}
