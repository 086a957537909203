import type { Logger } from 'pino';
import type { Connection, ConnectionHooks } from '../connection/types.js';
import type { InstanceRecord } from '../domain/types.js';
import type { CliContext } from './context.js';

export interface StandaloneConnection {
  connection: Connection;
  logger: Logger;
  /** Releases the daemon lock; stop the connection first. */
  release(): Promise<void>;
}

/**
 * With no daemon running: a WhatsApp connection for one instance, opened here with the daemon's
 * own options, while holding the daemon lock so a daemon started meanwhile cannot open a second
 * socket on the same credentials. Logs go to stderr (stdout is the command's). Returns null when a
 * daemon holds the lock. Baileys and the daemon's parts load only here: most commands never need them.
 */
export async function openStandalone(
  ctx: CliContext,
  record: InstanceRecord,
  makeHooks: (logger: Logger) => ConnectionHooks,
): Promise<StandaloneConnection | null> {
  const [{ pino }, { acquireDaemonLock }, { baileysFactory }, { ensureDir }, { systemClock }, { LOG_LEVELS }, { envLogLevel }, { storePaths }] = await Promise.all([
    import('pino'),
    import('../daemon/daemon-lock.js'),
    import('../daemon/plugins.js'),
    import('../store/atomic-write.js'),
    import('../domain/clock.js'),
    import('../config/schema.js'),
    import('../config/load.js'),
    import('../store/paths.js'),
  ]);
  let release: () => Promise<void>;
  try {
    release = await acquireDaemonLock(ctx.dataDir);
  } catch {
    return null;
  }
  try {
    const wanted = envLogLevel();
    const level = wanted !== undefined && (LOG_LEVELS as readonly string[]).includes(wanted) ? wanted : 'warn';
    // Baileys' own child logger takes baileys.logLevel.
    const logger = pino({ level, base: { pid: process.pid } }, pino.destination({ fd: 2, sync: true }));
    await ensureDir(storePaths(ctx.dataDir).authDir);
    const connection = baileysFactory({ config: ctx.config, logger, dataDir: ctx.dataDir, clock: systemClock })(record, makeHooks(logger));
    return { connection, logger, release };
  } catch (err) {
    await release();
    throw err;
  }
}
