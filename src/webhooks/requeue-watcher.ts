import { watch, type FSWatcher } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { parseRequestName } from './outbox-files.js';

/** Removes every nudge left from before this daemon started (its deliveries load as pending anyway). */
export async function clearRequests(dir: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  await Promise.all(names.filter((n) => parseRequestName(n)).map((n) => rm(join(dir, n), { force: true })));
}

/**
 * Notices CLI redeliveries: inotify on the nudge directory for speed, plus a poll (one readdir of
 * a directory that is almost always empty) in case events are lost. Each nudge is handled once,
 * then removed.
 */
export function watchRequests(options: {
  dir: string;
  pollMs: number;
  onRequest: (instanceId: string, deliveryId: string) => Promise<void>;
  logger: Logger;
}): () => void {
  let scanning = false;
  let again = false;
  let stopped = false;
  const scan = async (): Promise<void> => {
    if (scanning) {
      again = true;
      return;
    }
    scanning = true;
    try {
      do {
        again = false;
        const names = await readdir(options.dir).catch(() => [] as string[]);
        for (const name of names) {
          if (stopped) return;
          const parsed = parseRequestName(name);
          if (!parsed) continue;
          try {
            await options.onRequest(parsed.instanceId, parsed.deliveryId);
          } catch (err) {
            options.logger.error({ err, instanceId: parsed.instanceId, deliveryId: parsed.deliveryId }, 'webhook redelivery request failed');
          }
          await rm(join(options.dir, name), { force: true });
        }
      } while (again && !stopped);
    } finally {
      scanning = false;
    }
  };
  let watcher: FSWatcher | null = null;
  try {
    watcher = watch(options.dir, { persistent: false }, () => void scan());
    watcher.on('error', () => undefined);
  } catch {
    // The poll below still notices requests.
  }
  const timer = setInterval(() => void scan(), options.pollMs);
  timer.unref();
  void scan();
  return () => {
    stopped = true;
    clearInterval(timer);
    watcher?.close();
  };
}
