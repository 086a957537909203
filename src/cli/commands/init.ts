import type { Command } from 'commander';
import { envClusterSecret, envDatabaseUrl, isInitialised, loadConfig, saveConfig } from '../../config/load.js';
import { defaultConfig } from '../../config/validate.js';
import type { WriteGuard } from '../../fs/write-guard.js';
import { dataDirHolder, lockDataDir, unlockDataDir } from '../../storage/files/data-dir-lock.js';
import { assertNotInitialised, initialiseDataDir, type InitAnswers } from '../../config/init.js';
import { GatewayError } from '../../domain/errors.js';
import { ensureDir } from '../../fs/atomic-write.js';
import { withApi } from '../api.js';
import { globals, outputFlushed, parsePort } from '../context.js';

interface InitOptions {
  database?: string;
  clusterSecret?: string;
  nodeId?: string;
  advertiseUrl?: string;
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

async function ask(answers: InitAnswers): Promise<void> {
  const { confirm, input } = await import('@inquirer/prompts');
  try {
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
  } catch (err) {
    // Ctrl-C at a prompt: nothing was written.
    if (err instanceof Error && err.name === 'ExitPromptError') {
      process.stderr.write('\ngateway: init cancelled; nothing was written\n');
      process.exit(130);
    }
    throw err;
  }
}

export function registerInit(program: Command): void {
  program
    .command('init')
    .description('first-time set-up of the data dir: host, port, webhook policy and a new server secret (shown once)')
    .option('-y, --yes', 'take defaults and flags without asking')
    .option('--force', 'on an initialised data dir: a new server secret (every other setting and the instances are kept; a running daemon uses it at once)')
    .option('--host <host>', 'address to listen on (default 127.0.0.1)')
    .option('--port <port>', 'port to listen on (default 8080)', parsePort)
    .option('--allow-private-webhooks', 'allow webhook URLs on loopback/private addresses')
    .option('--database <url>', 'postgres://... : keep everything in PostgreSQL; creates the gateway in an empty database (prints its server and cluster secrets once) or joins the one it holds (env GATEWAY_DATABASE_URL)')
    .option('--cluster-secret <secret>', 'joining a gateway that a database holds: its cluster secret (env GATEWAY_CLUSTER_SECRET)')
    .option('--node-id <id>', 'this node of the gateway (default hostname:port)')
    .option('--advertise-url <url>', 'how the other nodes reach this one (default http://HOST:PORT)')
    .action(async (opts: InitOptions, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      assertNotInitialised(dataDir, opts.force ?? false);
      const answers: InitAnswers = {};
      if (opts.host !== undefined) answers.host = opts.host;
      if (opts.port !== undefined) answers.port = opts.port;
      if (opts.allowPrivateWebhooks) answers.allowPrivateTargets = true;

      if (dataDirHolder(dataDir)?.kind === 'daemon') {
        if (Object.keys(answers).length > 0) throw new GatewayError('USAGE', 'the daemon is running: stop it to change host, port or the webhook policy (init --force alone issues a new server secret at once)');
        await withApi(dataDir, async (api) => {
          const { serverSecret } = (await api.call('POST', '/control/server-secret')) as { serverSecret: string };
          const config = loadConfig(dataDir);
          await outputFlushed(json, { serverSecret, host: config.host, port: config.port, dataDir }, `New server secret (X-API-Secret, shown once, store it now): ${serverSecret}\nThe running daemon accepts only this one from now on.`);
          // Shown: only now does the old secret stop (a kill before this leaves both working).
          await api.call('POST', '/control/server-secret/shown');
        });
        return;
      }
      if (!opts.yes && !opts.force && interactive()) await ask(answers);
      await ensureDir(dataDir);
      const lock = await lockDataDir(dataDir, 'cli', 30_000);
      const database = opts.database ?? envDatabaseUrl();
      if (database !== undefined) {
        try {
          await initNode(dataDir, database, opts, answers, json, lock);
        } finally {
          await unlockDataDir(lock);
        }
        return;
      }
      try {
        const { config, serverSecret, shown } = await initialiseDataDir(dataDir, answers, opts.force ?? false, lock);
        await outputFlushed(
          json,
          { serverSecret, host: config.host, port: config.port, dataDir },
          [`Initialised ${dataDir}`, `Listening address: ${config.host}:${config.port}`, '', `Server secret (X-API-Secret, shown once, store it now): ${serverSecret}`].join('\n'),
        );
        // Printed: the secret it replaced (init --force) stops now.
        await shown();
      } finally {
        await unlockDataDir(lock);
      }
    });
}

/**
 * `init --database URL`: this data dir becomes a node of the gateway the database holds. An empty
 * database gets the gateway (its server and cluster secrets printed once); a database that holds
 * one is joined with its cluster secret. The node's own config keeps the database URL and the
 * cluster secret (0600); the server secret, plans and webhook policy live in the database.
 */
async function initNode(dataDir: string, url: string, opts: InitOptions, answers: InitAnswers, json: boolean, lock: WriteGuard): Promise<void> {
  const clusterSecret = opts.clusterSecret ?? envClusterSecret() ?? null;
  // The database first: a refused join leaves this data dir as it was.
  const base = isInitialised(dataDir) ? loadConfig(dataDir) : defaultConfig();
  const webhooks = { ...base.webhooks, allowPrivateTargets: answers.allowPrivateTargets ?? base.webhooks.allowPrivateTargets };
  // pg loads only when a database is named (see storage/open.ts).
  const { initDatabase } = await import('../../cluster/init-database.js');
  const result = await initDatabase(url, { clusterSecret, settings: { plans: base.plans, webhooks } });
  const local = await initialiseDataDir(dataDir, answers, opts.force ?? isInitialised(dataDir), lock);
  const config = {
    ...local.config,
    // The database holds the server secret: this file's would only confuse.
    serverSecretHash: null,
    retiringServerSecretHash: null,
    storage: { ...local.config.storage, postgres: { url } },
    cluster: {
      ...local.config.cluster,
      secret: result.clusterSecret,
      ...(opts.nodeId !== undefined ? { nodeId: opts.nodeId } : {}),
      ...(opts.advertiseUrl !== undefined ? { advertiseUrl: opts.advertiseUrl } : {}),
    },
  };
  await saveConfig(dataDir, config, lock);
  if (result.created) {
    await outputFlushed(
      json,
      { serverSecret: result.serverSecret, clusterSecret: result.clusterSecret, host: config.host, port: config.port, dataDir },
      [
        `Initialised ${dataDir} as the first node of a gateway in PostgreSQL`,
        `Listening address: ${config.host}:${config.port}`,
        '',
        `Server secret (X-API-Secret, shown once, store it now): ${result.serverSecret}`,
        `Cluster secret (other nodes join with --cluster-secret, shown once): ${result.clusterSecret}`,
      ].join('\n'),
    );
  } else {
    await outputFlushed(json, { joined: true, host: config.host, port: config.port, dataDir }, `Initialised ${dataDir} as a node of the gateway in that database (it serves with the gateway's server secret)`);
  }
}
