import type { Command } from 'commander';
import { envLogLevel } from '../../config/load.js';
import { LOG_LEVELS, type LogLevel } from '../../config/schema.js';
import { GatewayError } from '../../domain/errors.js';
import type { RunningDaemon } from '../../daemon/boot.js';
import { globals, parsePort } from '../context.js';
import { firstRun, firstRunText } from '../first-run.js';

interface StartOptions {
  host?: string;
  port?: number;
  logLevel?: string;
}

export function registerStart(program: Command): void {
  program
    .command('start')
    .description('run the daemon in the foreground (initialises a fresh data dir with defaults first)')
    .option('--host <host>', 'override config host')
    .option('--port <port>', 'override config port (0 = any free port)', parsePort)
    .option('--log-level <level>', `log level (${LOG_LEVELS.join(', ')}); env LOG_LEVEL`)
    .action(async (opts: StartOptions, cmd: Command) => {
      const { dataDir } = globals(cmd);
      const logLevel = opts.logLevel ?? envLogLevel();
      if (logLevel !== undefined && !(LOG_LEVELS as readonly string[]).includes(logLevel)) {
        throw new GatewayError('USAGE', `--log-level: expected one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(logLevel)}`);
      }
      // Handlers go in before anything listens: a SIGTERM during start-up still shuts down cleanly.
      let daemonRef: RunningDaemon | null = null;
      let signalled: string | null = null;
      const shutdown = (signal: string): void => {
        signalled = signal;
        const d = daemonRef;
        if (!d) return; // picked up once start-up finishes
        d.daemon.core.logger.info({ signal }, 'signal received');
        d.close().then(
          () => process.exit(0),
          (err: unknown) => {
            d.daemon.core.logger.error({ err }, 'shutdown failed');
            process.exit(1);
          },
        );
      };
      process.once('SIGTERM', () => shutdown('SIGTERM'));
      process.once('SIGINT', () => shutdown('SIGINT'));
      // Loaded here so that short CLI commands do not pay for the daemon's imports.
      const { startDaemon, panelUrl } = await import('../../daemon/boot.js');
      let initialised = false;
      const daemon = await startDaemon({
        dataDir,
        ...(opts.host !== undefined ? { host: opts.host } : {}),
        ...(opts.port !== undefined ? { port: opts.port } : {}),
        ...(logLevel !== undefined ? { logLevel: logLevel as LogLevel } : {}),
        onInitialised: (secret) => {
          initialised = true;
          // Plain text on stderr, once, so it never lands in the JSON log stream.
          process.stderr.write(`\nInitialised ${dataDir} with default settings.\nServer secret (X-API-Secret), shown once, store it now:\n\n  ${secret}\n\n`);
        },
      });
      daemonRef = daemon;
      if (initialised) {
        // After the secret: where the panel is, how to sign in, what to run next. A person at a
        // terminal reads text; anything else (systemd, a container log) gets one JSON line.
        const config = daemon.daemon.core.config;
        const said = firstRun(config.panel.enabled ? panelUrl(daemon.host, daemon.port) : null);
        if (process.stderr.isTTY) process.stderr.write(firstRunText(said));
        else daemon.daemon.core.logger.info({ firstRun: said }, 'first run: open the panel, sign in with the server secret, then create an instance');
      }
      if (signalled) shutdown(signalled);
    });
}
