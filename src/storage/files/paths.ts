import { join } from 'node:path';

/** Where everything lives in the data dir. */
export function storePaths(dataDir: string) {
  return {
    dataDir,
    config: join(dataDir, 'config.json'),
    instances: join(dataDir, 'instances.json'),
    creditsDir: join(dataDir, 'credits'),
    credits: (id: string) => join(dataDir, 'credits', `${id}.json`),
    outboxDir: join(dataDir, 'outbox'),
    authDir: join(dataDir, 'auth'),
    flowsDir: join(dataDir, 'flows'),
    messagesDir: join(dataDir, 'messages'),
    mediaDir: join(dataDir, 'media'),
    operators: join(dataDir, 'operators.json'),
    auditDir: join(dataDir, 'audit'),
    usageDir: join(dataDir, 'usage'),
    /** The data dir lock: held by the daemon, or by a CLI command while no daemon runs. */
    lock: join(dataDir, 'gateway.lock'),
    daemonInfo: join(dataDir, 'daemon.json'),
    controlSocket: join(dataDir, 'control.sock'),
  };
}

export type StorePaths = ReturnType<typeof storePaths>;

export { INSTANCE_ID_PATTERN, isInstanceId } from '../../domain/ids.js';
