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
    /** The data dir lock: held by the daemon, or by a CLI command while no daemon runs. */
    lock: join(dataDir, 'gateway.lock'),
    daemonInfo: join(dataDir, 'daemon.json'),
    controlSocket: join(dataDir, 'control.sock'),
  };
}

export type StorePaths = ReturnType<typeof storePaths>;

/** Instance ids as we generate them; anything else (`__proto__`, `../x`, 5 000 chars) is unknown. */
export const INSTANCE_ID_PATTERN = /^inst_[A-Za-z0-9_-]{6,40}$/;

export function isInstanceId(value: string): boolean {
  return INSTANCE_ID_PATTERN.test(value);
}
