import { createServer } from 'node:net';
import { dataDirHolder, runningDaemon } from '../storage/files/data-dir-lock.js';
import type { CheckResult } from './types.js';

/** Tries to listen on host:port; resolves with the error code, or null when the bind worked. */
export function tryBind(host: string, port: number): Promise<string | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    server.listen({ host, port, exclusive: true }, () => {
      server.close(() => resolve(null));
    });
  });
}

/** The configured address is free, or held by this data dir's own running daemon. */
export async function checkPort(dataDir: string, host: string, port: number): Promise<CheckResult> {
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const daemon = runningDaemon(dataDir);
  if (daemon) {
    const at = daemon.port ? ` on ${daemon.host}:${daemon.port}` : '';
    return { name: 'port', status: 'ok', message: `the gateway daemon for this data dir is running (pid ${daemon.pid || '?'})${at}` };
  }
  const holder = dataDirHolder(dataDir);
  if (holder?.kind === 'pair') {
    return { name: 'port', status: 'warn', message: `no daemon runs: a \`gateway pair\` (pid ${holder.pid}) is pairing on this data dir`, fix: 'start the daemon once pairing finished (`gateway start`)' };
  }
  const code = await tryBind(host, port);
  if (code === null) return { name: 'port', status: 'ok', message: port === 0 ? `port 0: the daemon will take any free port on ${host}` : `${where} is free` };
  const fixes: Record<string, string> = {
    EADDRINUSE: `find the process with \`ss -ltnp 'sport = :${port}'\` and stop it, or set another "port" in config.json (or \`gateway start --port N\`)`,
    EACCES: `ports below 1024 need privileges: use a port >= 1024 (and a reverse proxy in front), or grant CAP_NET_BIND_SERVICE in the unit (AmbientCapabilities=CAP_NET_BIND_SERVICE)`,
    EADDRNOTAVAIL: `"host" in config.json (${host}) is not an address of this machine: use 127.0.0.1, 0.0.0.0 or one of \`ip -brief addr\``,
    ENOTFOUND: `"host" in config.json (${host}) does not resolve: use an IP address`,
  };
  const what: Record<string, string> = {
    EADDRINUSE: `${where} is in use by another process`,
    EACCES: `no permission to listen on ${where}`,
    EADDRNOTAVAIL: `cannot listen on ${where}: address not available`,
    ENOTFOUND: `cannot listen on ${where}: host not found`,
  };
  return {
    name: 'port',
    status: 'fail',
    message: what[code] ?? `cannot listen on ${where} (${code})`,
    fix: fixes[code] ?? 'check "host" and "port" in config.json',
  };
}
