import type { DaemonPlugin } from '../boot.js';
import { errorMessage } from '../../domain/errors.js';
import { ControlServer } from './server.js';

export interface ControlPluginOptions {
  /** Clients served at once (default 16). */
  maxClients?: number;
  /** How long a client may take to send its request (default 10 s). */
  requestTimeoutMs?: number;
}

/**
 * The local control socket `gateway pair` talks to, so pairing drives the daemon's own connection
 * instead of opening a second one. A socket that cannot be opened (a data dir path too long for a
 * Unix socket, say) is logged and leaves the rest of the daemon running.
 */
export function createControlPlugin(options: ControlPluginOptions = {}): DaemonPlugin {
  let server: ControlServer | null = null;
  return {
    name: 'control',
    async setup(deps) {
      const socketPath = deps.instances.paths.controlSocket;
      const logger = deps.logger.child({ component: 'control' });
      const candidate = new ControlServer({
        socketPath,
        manager: deps.manager,
        changedOnDisk: () => deps.instances.changedOnDisk(),
        reload: () => deps.reload(),
        logger,
        ...options,
      });
      try {
        await candidate.listen();
        server = candidate;
      } catch (err) {
        logger.error({ err: errorMessage(err), socketPath }, 'control socket unavailable: `gateway pair` cannot reach this daemon');
      }
    },
    async stop() {
      await server?.close();
      server = null;
    },
  };
}
